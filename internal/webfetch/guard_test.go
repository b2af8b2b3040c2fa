package webfetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// fakeResolver answers from a map and counts lookups. A host mapped to nil
// blocks until the context ends.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
	calls map[string]int
}

func newFakeResolver(hosts map[string][]string) *fakeResolver {
	return &fakeResolver{hosts: hosts, calls: map[string]int{}}
}

func (r *fakeResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	r.calls[host]++
	ips, ok := r.hosts[host]
	r.mu.Unlock()
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if ips == nil {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	out := make([]net.IPAddr, len(ips))
	for i, s := range ips {
		out[i] = net.IPAddr{IP: net.ParseIP(s)}
	}
	return out, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

var guardHosts = map[string][]string{
	"public.test":    {"93.184.216.34", "2606:2800:220:1::1"},
	"mixed.test":     {"93.184.216.34", "10.0.0.5"},
	"mixed6.test":    {"2606:2800:220:1::1", "fd00::1"},
	"mapped.test":    {"::ffff:192.168.1.1"},
	"metadata.test":  {"169.254.169.254"},
	"loop.test":      {"127.0.0.1"},
	"cgnat.test":     {"100.64.0.1"},
	"nat64priv.test": {"64:ff9b::a00:1"},
}

func TestGuardDefault(t *testing.T) {
	f := New(Options{Resolver: newFakeResolver(guardHosts)})
	tests := []struct {
		url  string
		kind RefusalKind // "" means allowed
		addr string      // the vetted address when allowed
	}{
		// URL shape.
		{"ftp://public.test/", RefusedURL, ""},
		{"file:///etc/passwd", RefusedURL, ""},
		{"javascript:alert(1)", RefusedURL, ""},
		{"/relative/path", RefusedURL, ""},
		{"http:///nohost", RefusedURL, ""},
		{"http://user:pw@public.test/", RefusedURL, ""},
		{"http://user@public.test/", RefusedURL, ""},
		{"http://public.test\\@10.0.0.1/", RefusedURL, ""},
		{"http://pub lic.test/", RefusedURL, ""},
		{"http://public.test:/", RefusedURL, ""},
		{"http://bad%2fhost.test/", RefusedURL, ""},
		// Ports.
		{"http://public.test:8080/", RefusedPort, ""},
		{"https://public.test:22/", RefusedPort, ""},
		{"http://public.test:443/", "", "93.184.216.34"},
		{"https://public.test:80/", "", "93.184.216.34"},
		{"HTTPS://PUBLIC.TEST/x#frag", "", "93.184.216.34"},
		// IPv4 literals and their other spellings.
		{"http://8.8.8.8/", "", "8.8.8.8"},
		{"http://134744072/", "", "8.8.8.8"},
		{"http://0x08080808/", "", "8.8.8.8"},
		{"http://127.0.0.1/", RefusedAddress, ""},
		{"http://2130706433/", RefusedAddress, ""},
		{"http://0x7f000001/", RefusedAddress, ""},
		{"http://0X7F000001/", RefusedAddress, ""},
		{"http://127.1/", RefusedAddress, ""},
		{"http://127.0.1/", RefusedAddress, ""},
		{"http://0177.0.0.1/", RefusedAddress, ""},
		{"http://0x7f.1/", RefusedAddress, ""},
		{"http://127.0.0.1./", RefusedAddress, ""},
		{"http://017700000001/", RefusedAddress, ""},
		{"http://1.2.3.999/", RefusedURL, ""},
		{"http://1.2.3.4.5/", RefusedURL, ""},
		{"http://4294967296/", RefusedURL, ""},
		{"http://0/", RefusedAddress, ""},
		{"http://0.0.0.0/", RefusedAddress, ""},
		{"http://10.1.2.3/", RefusedAddress, ""},
		{"http://172.16.0.1/", RefusedAddress, ""},
		{"http://172.31.255.255/", RefusedAddress, ""},
		{"http://172.32.0.1/", "", "172.32.0.1"},
		{"http://192.168.1.1/", RefusedAddress, ""},
		{"http://169.254.169.254/latest/meta-data", RefusedAddress, ""},
		{"http://100.64.0.1/", RefusedAddress, ""},
		{"http://100.127.255.255/", RefusedAddress, ""},
		{"http://100.128.0.1/", "", "100.128.0.1"},
		{"http://198.18.0.1/", RefusedAddress, ""},
		{"http://198.19.255.1/", RefusedAddress, ""},
		{"http://192.0.2.1/", RefusedAddress, ""},
		{"http://198.51.100.7/", RefusedAddress, ""},
		{"http://203.0.113.9/", RefusedAddress, ""},
		{"http://192.0.0.8/", RefusedAddress, ""},
		{"http://224.0.0.1/", RefusedAddress, ""},
		{"http://240.0.0.1/", RefusedAddress, ""},
		{"http://255.255.255.255/", RefusedAddress, ""},
		// IPv6 literals and v4-mapped / NAT64 / 6to4 forms.
		{"http://[::1]/", RefusedAddress, ""},
		{"http://[::]/", RefusedAddress, ""},
		{"http://[::ffff:127.0.0.1]/", RefusedAddress, ""},
		{"http://[::ffff:7f00:1]/", RefusedAddress, ""},
		{"http://[::ffff:10.0.0.1]/", RefusedAddress, ""},
		{"http://[::ffff:8.8.8.8]/", "", "8.8.8.8"},
		{"http://[::127.0.0.1]/", RefusedAddress, ""},
		{"http://[fe80::1%25eth0]/", RefusedAddress, ""},
		{"http://[fe80::1]/", RefusedAddress, ""},
		{"http://[fc00::1]/", RefusedAddress, ""},
		{"http://[fd12:3456::1]/", RefusedAddress, ""},
		{"http://[ff02::1]/", RefusedAddress, ""},
		{"http://[2001:db8::1]/", RefusedAddress, ""},
		{"http://[64:ff9b::a00:1]/", RefusedAddress, ""},
		{"http://[64:ff9b::808:808]/", "", "64:ff9b::808:808"},
		{"http://[2002:c0a8:101::1]/", RefusedAddress, ""},
		{"http://[2001::1]/", RefusedAddress, ""},
		{"http://[fec0::1]/", RefusedAddress, ""},
		{"http://[2606:4700:4700::1111]/", "", "2606:4700:4700::1111"},
		// Names, resolved once.
		{"http://localhost/", RefusedAddress, ""},
		{"http://a.localhost/", RefusedAddress, ""},
		{"http://public.test/", "", "93.184.216.34"},
		{"http://public.test./", "", "93.184.216.34"},
		{"http://mixed.test/", RefusedAddress, ""},
		{"http://mixed6.test/", RefusedAddress, ""},
		{"http://mapped.test/", RefusedAddress, ""},
		{"http://metadata.test/", RefusedAddress, ""},
		{"http://loop.test/", RefusedAddress, ""},
		{"http://cgnat.test/", RefusedAddress, ""},
		{"http://nat64priv.test/", RefusedAddress, ""},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			tg, err := f.vet(context.Background(), tc.url)
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got := tg.addrs[0].String(); got != tc.addr {
					t.Fatalf("vetted address %s, want %s", got, tc.addr)
				}
				return
			}
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a RefusedError of kind %s", err, tc.kind)
			}
			if re.Kind != tc.kind {
				t.Fatalf("kind %s (%s), want %s", re.Kind, re.Reason, tc.kind)
			}
			if strings.Contains(err.Error(), "pw@") {
				t.Fatalf("credentials in error: %v", err)
			}
		})
	}
}

func TestGuardCanonicalisesIPSpelling(t *testing.T) {
	f := New(Options{})
	tg, err := f.vet(context.Background(), "http://0x08080808/a?b=c")
	if err != nil {
		t.Fatal(err)
	}
	if tg.url.Host != "8.8.8.8" || tg.port != "80" {
		t.Fatalf("host %q port %q", tg.url.Host, tg.port)
	}
}

func TestGuardUnknownHost(t *testing.T) {
	f := New(Options{Resolver: newFakeResolver(guardHosts)})
	_, err := f.vet(context.Background(), "https://nx.test/")
	var le *LookupError
	if !errors.As(err, &le) || le.Host != "nx.test" {
		t.Fatalf("err = %v, want LookupError", err)
	}
}

func TestGuardLoopbackMode(t *testing.T) {
	f := New(Options{AllowLoopback: true, Resolver: newFakeResolver(guardHosts)})
	for _, u := range []string{"http://127.0.0.1:8080/", "http://[::1]:9/", "http://loop.test:1234/", "http://2130706433:5/"} {
		if _, err := f.vet(context.Background(), u); err != nil {
			t.Errorf("%s refused in loopback mode: %v", u, err)
		}
	}
	// Loopback mode admits loopback only, never private space.
	for _, u := range []string{"http://10.0.0.1:8080/", "http://mixed.test/", "http://[fd00::1]/", "http://169.254.169.254/"} {
		if _, err := f.vet(context.Background(), u); !isRefused(err) {
			t.Errorf("%s not refused in loopback mode: %v", u, err)
		}
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	tests := []struct {
		in          string
		want        string
		numeric, ok bool
	}{
		{"2130706433", "127.0.0.1", true, true},
		{"0x7f000001", "127.0.0.1", true, true},
		{"127.1", "127.0.0.1", true, true},
		{"127.0.1", "127.0.0.1", true, true},
		{"0300.0250.1.1", "192.168.1.1", true, true},
		{"0xc0.0xa8.1.1", "192.168.1.1", true, true},
		{"0x", "0.0.0.0", true, true},
		{"256.1", "", true, false},
		{"1.256.1.1", "", true, false},
		{"09", "", false, false}, // not octal, not decimal: a name
		{"example.com", "", false, false},
		{"1.example", "", false, false},
		{"example.1", "", true, false},
		{"", "", false, false},
	}
	for _, tc := range tests {
		a, numeric, ok := parseLegacyIPv4(tc.in)
		if numeric != tc.numeric || ok != tc.ok || (ok && a.String() != tc.want) {
			t.Errorf("parseLegacyIPv4(%q) = %v %v %v, want %s %v %v", tc.in, a, numeric, ok, tc.want, tc.numeric, tc.ok)
		}
	}
}

func FuzzGuard(f *testing.F) {
	for _, s := range []string{
		"http://2130706433/", "http://0x7f.1/", "http://[::ffff:7f00:1]/", "https://public.test:443/a?b#c",
		"http://[fe80::1%25eth0]/", "http://1.2.3.4.5/", "http://u:p@h/", "http://%30x7f.1/", "http://0177.1/",
	} {
		f.Add(s)
	}
	fe := New(Options{Resolver: newFakeResolver(guardHosts)})
	f.Fuzz(func(t *testing.T, raw string) {
		u, lit, err := fe.parseURL(raw)
		if err != nil {
			return
		}
		host := u.Hostname()
		if lit.IsValid() {
			if checkAddr(lit, false) != nil {
				t.Fatalf("%q accepted with non-public %s", raw, lit)
			}
			return
		}
		// An accepted name must be no IP spelling at all.
		if _, err := netip.ParseAddr(host); err == nil {
			t.Fatalf("%q accepted IP %q as a name", raw, host)
		}
		if _, numeric, _ := parseLegacyIPv4(host); numeric {
			t.Fatalf("%q accepted numeric host %q as a name", raw, host)
		}
		if host == "localhost" || u.User != nil {
			t.Fatalf("%q accepted", raw)
		}
		if p := u.Port(); p != "" && p != "80" && p != "443" {
			t.Fatalf("%q accepted port %s", raw, p)
		}
	})
}

func FuzzLegacyIPv4(f *testing.F) {
	f.Add(uint32(2130706433))
	f.Add(uint32(0))
	f.Fuzz(func(t *testing.T, v uint32) {
		want := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		for _, s := range []string{fmt.Sprint(v), fmt.Sprintf("0x%x", v), fmt.Sprintf("0%o", v),
			fmt.Sprintf("%d.%d", v>>24, v&0xffffff), want.String()} {
			a, numeric, ok := parseLegacyIPv4(s)
			if !numeric || !ok || a != want {
				t.Fatalf("parseLegacyIPv4(%q) = %v %v %v, want %v", s, a, numeric, ok, want)
			}
		}
	})
}
