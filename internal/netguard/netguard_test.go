package netguard

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

var (
	devServices = []Service{
		{Name: "Temporal frontend", Host: "127.0.0.1", Port: "7233"},
		{Name: "Temporal UI", Host: "127.0.0.1", Port: "8233"},
		{Name: "S3 endpoint", Host: "localhost", Port: "7070"},
	}
	workerServices = []Service{
		{Name: "Temporal frontend", Host: "temporal.internal", Port: "7233", Addrs: []netip.Addr{netip.MustParseAddr("10.9.9.9")}},
		{Name: "S3 endpoint", Host: "10.1.2.3", Port: "9000"},
	}
)

// resolve is the fake DNS for the table.
var resolve = map[string][]string{
	"public.test":       {"93.184.216.34", "2606:2800:220:1::1"},
	"mixed.test":        {"93.184.216.34", "10.0.0.5"},
	"metadata.test":     {"169.254.169.254"},
	"imds6.test":        {"fd00:ec2::254"},
	"loop.test":         {"127.0.0.1"},
	"mapped.test":       {"::ffff:192.168.1.1"},
	"temporal.internal": {"10.9.9.9"},
	"alias.test":        {"10.9.9.9"},
	"shop.example":      {"93.184.216.35"},
	"img.cdn.example":   {"93.184.216.36"},
}

func decide(p *Policy, raw string) Decision {
	t, ok := ParseTarget(raw)
	if !ok {
		return Decision{}
	}
	var addrs []netip.Addr
	var err error
	if p.NeedsLookup(t) {
		list, found := resolve[t.Host.Name]
		if !found {
			err = errors.New("no such host")
		}
		for _, s := range list {
			addrs = append(addrs, netip.MustParseAddr(s))
		}
	}
	return p.Decide(t, addrs, err)
}

func TestDecideTable(t *testing.T) {
	worker := &Policy{Services: workerServices}
	dev := &Policy{AllowLoopback: true, Services: devServices}
	private := &Policy{AllowPrivate: true, Services: workerServices}
	hosts := &Policy{AllowHosts: []string{"169.254.169.254", "intranet.corp", "*.lab.corp", "10.0.0.7"}, Services: workerServices}
	session := &Policy{AllowLoopback: true, SessionHosts: []string{"shop.example", "*.cdn.example", "127.0.0.1"}, Services: devServices}
	tests := []struct {
		p    *Policy
		url  string
		rule Rule
	}{
		// metadata, every spelling
		{worker, "http://169.254.169.254/latest/meta-data/", RuleMetadata},
		{worker, "http://169.254.169.254./", RuleMetadata},
		{worker, "http://2852039166/", RuleMetadata},
		{worker, "http://0xa9fea9fe/", RuleMetadata},
		{worker, "http://0XA9FEA9FE/", RuleMetadata},
		{worker, "http://0251.0376.0251.0376/", RuleMetadata},
		{worker, "http://0xa9.0xfe.0xa9.0xfe/", RuleMetadata},
		{worker, "http://169.254.43518/", RuleMetadata},
		{worker, "http://169.16689662/", RuleMetadata},
		{worker, "http://[::ffff:169.254.169.254]/", RuleMetadata},
		{worker, "http://[::FFFF:A9FE:A9FE]/", RuleMetadata},
		{worker, "http://[64:ff9b::a9fe:a9fe]/", RuleMetadata},
		{worker, "http://[2002:a9fe:a9fe::1]/", RuleMetadata},
		{worker, "http://[fd00:ec2::254]/", RuleMetadata},
		{worker, "http://[FD00:EC2:0:0:0:0:0:254]/", RuleMetadata},
		{worker, "http://metadata.test/", RuleMetadata},
		{worker, "http://imds6.test/", RuleMetadata},
		{private, "http://169.254.169.254/", RuleMetadata},
		{dev, "http://169.254.169.254/", RuleMetadata},
		{worker, "ws://169.254.169.254/", RuleMetadata},
		// loopback
		{worker, "http://127.0.0.1:8080/", RuleLoopback},
		{worker, "http://127.1:8080/", RuleLoopback},
		{worker, "http://2130706433/", RuleLoopback},
		{worker, "http://0x7f000001/", RuleLoopback},
		{worker, "http://0177.0.0.1/", RuleLoopback},
		{worker, "http://[::1]/", RuleLoopback},
		{worker, "http://[::ffff:127.0.0.1]/", RuleLoopback},
		{worker, "http://LOCALHOST./", RuleLoopback},
		{worker, "http://app.localhost/", RuleLoopback},
		{worker, "http://loop.test/", RuleLoopback},
		{worker, "wss://127.0.0.1/", RuleLoopback},
		{worker, "http://0.0.0.0:8080/", RuleSpecial},
		{worker, "http://0/", RuleSpecial},
		{worker, "http://[::]/", RuleSpecial},
		// private
		{worker, "http://10.0.0.1/", RulePrivate},
		{worker, "http://192.168.1.1/", RulePrivate},
		{worker, "http://0xc0a80101/", RulePrivate},
		{worker, "http://172.16.0.1/", RulePrivate},
		{worker, "http://100.64.0.1/", RulePrivate},
		{worker, "http://[fd12::1]/", RulePrivate},
		{worker, "http://[fe80::1%25eth0]/", RulePrivate},
		{worker, "http://mapped.test/", RulePrivate},
		{worker, "http://mixed.test/", RulePrivate},
		{private, "http://10.0.0.1/", ""},
		{private, "http://127.0.0.1:8080/", ""},
		{private, "http://localhost:8080/", ""},
		{dev, "http://10.0.0.1/", RulePrivate},
		// special
		{worker, "http://224.0.0.1/", RuleSpecial},
		{worker, "http://255.255.255.255/", RuleSpecial},
		{worker, "http://192.0.2.1/", RuleSpecial},
		{worker, "http://[ff02::1]/", RuleSpecial},
		{worker, "http://[2001:db8::1]/", RuleSpecial},
		// public
		{worker, "https://93.184.216.34/", ""},
		{worker, "https://public.test/", ""},
		{worker, "https://PUBLIC.TEST./a?b#c", ""},
		{worker, "http://[2606:2800:220:1::1]/", ""},
		{worker, "data:text/html,hi", ""},
		{worker, "blob:https://public.test/x", ""},
		{worker, "about:blank", ""},
		// unresolvable and invalid
		{worker, "http://nowhere.test/", RuleUnresolve},
		{worker, "http://256.1.1.1/", RuleInvalid},
		{worker, "http://1.2.3.4.5/", RuleInvalid},
		{worker, "http://[zz::1]/", RuleInvalid},
		// services
		{dev, "http://127.0.0.1:7233/", RuleService},
		{dev, "http://localhost:8233/namespaces/default/workflows", RuleService},
		{dev, "http://127.0.0.2:8233/", RuleService},
		{dev, "http://[::1]:7070/", RuleService},
		{dev, "http://2130706433:7070/", RuleService},
		{dev, "ws://127.0.0.1:8233/", RuleService},
		{dev, "http://0.0.0.0:7233/", RuleService},
		{dev, "http://127.0.0.1:8380/", ""},
		{dev, "http://localhost:8380/", ""},
		{worker, "http://temporal.internal:7233/", RuleService},
		{worker, "http://alias.test:7233/", RuleService},
		{worker, "http://temporal.internal:80/", RulePrivate},
		{worker, "http://10.1.2.3:9000/", RuleService},
		{private, "http://10.1.2.3:9000/", RuleService},
		{hosts, "http://10.1.2.3:9000/", RuleService},
		// operator allow list
		{hosts, "http://169.254.169.254/", ""},
		{hosts, "http://0xa9fea9fe/", ""},
		{hosts, "http://intranet.corp/", ""},
		{hosts, "http://INTRANET.CORP./", ""},
		{hosts, "http://a.lab.corp/", ""},
		{hosts, "http://lab.corp/", RuleUnresolve},
		{hosts, "http://10.0.0.7/", ""},
		{hosts, "http://10.0.0.8/", RulePrivate},
		// session allow list
		{session, "https://shop.example/cart", ""},
		{session, "https://SHOP.EXAMPLE./cart", ""},
		{session, "https://img.cdn.example/a.png", ""},
		{session, "https://cdn.example/a.png", RuleAllowList},
		{session, "https://evil.example/", RuleAllowList},
		{session, "https://shop.example.evil/", RuleAllowList},
		{session, "http://127.0.0.1:8380/", ""},
		{session, "http://localhost:8380/", RuleAllowList},
		{session, "http://127.0.0.1:7233/", RuleService},
		{session, "wss://evil.example/socket", RuleAllowList},
	}
	for _, tc := range tests {
		d := decide(tc.p, tc.url)
		if d.Rule != tc.rule {
			t.Errorf("%s: rule %q (%s), want %q", tc.url, d.Rule, d.Message, tc.rule)
			continue
		}
		if d.Rule != "" && !strings.Contains(d.Message, "rule "+string(d.Rule)) {
			t.Errorf("%s: message %q does not name its rule", tc.url, d.Message)
		}
		switch d.Rule {
		case RuleLoopback, RulePrivate:
			if !strings.Contains(d.Message, "--browser-allow-private") {
				t.Errorf("%s: message %q does not name the flag", tc.url, d.Message)
			}
		case RuleMetadata, RuleSpecial:
			if !strings.Contains(d.Message, "--browser-allow-hosts") {
				t.Errorf("%s: message %q does not name the flag", tc.url, d.Message)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	for in, want := range map[string]Class{
		"169.254.169.254": Metadata, "fd00:ec2::254": Metadata, "::ffff:169.254.169.254": Metadata,
		"127.0.0.1": Loopback, "::1": Loopback, "::ffff:127.0.0.1": Loopback, "64:ff9b::7f00:1": Loopback,
		"10.0.0.1": Private, "fd00::1": Private, "fe80::1": Private, "100.64.0.1": Private,
		"0.0.0.0": Special, "::": Special, "224.0.0.1": Special, "2001:db8::1": Special,
		"8.8.8.8": Public, "2606:4700::1111": Public, "2002:808:808::1": Public,
	} {
		if got := Classify(netip.MustParseAddr(in)).Class; got != want {
			t.Errorf("Classify(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateHostList(t *testing.T) {
	for _, ok := range []string{"example.com", "*.example.com", "10.0.0.1", "::1", "[::1]", "INTRANET"} {
		if err := ValidateHostList([]string{ok}); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "http://x", "x:80", "a/b", "*", "*.10.0.0.1", "a b", "256.1.1.1"} {
		if err := ValidateHostList([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzDecideNeverSpecial: under the strictest policy no URL whose host is a
// special-purpose address, in any spelling, is allowed, and a name is only
// allowed once its answers are public.
func FuzzDecideNeverSpecial(f *testing.F) {
	for _, s := range []string{
		"http://169.254.169.254/", "http://0xa9fea9fe/", "http://[::ffff:169.254.169.254]/", "http://127.1/",
		"http://LOCALHOST./", "http://[fd00:ec2::254]/", "http://0251.0376.0251.0376./", "http://10.0.0.1:80/",
		"https://public.test/", "ws://[::1]:9/", "http://%31%32%37.0.0.1/", "http://[fe80::1%25eth0]/",
	} {
		f.Add(s, "93.184.216.34")
	}
	f.Add("http://name.test/", "169.254.169.254")
	f.Add("http://name.test/", "::ffff:10.0.0.1")
	p := &Policy{Services: devServices}
	f.Fuzz(func(t *testing.T, raw, answer string) {
		tg, ok := ParseTarget(raw)
		if !ok {
			return
		}
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(answer); err == nil {
			addrs = []netip.Addr{a}
		}
		d := p.Decide(tg, addrs, nil)
		if !d.Allowed() {
			return
		}
		if tg.Host.Invalid || IsLocalhostName(tg.Host.Name) {
			t.Fatalf("%q allowed an invalid or localhost host %+v", raw, tg.Host)
		}
		if tg.Host.Addr.IsValid() {
			if c := Classify(tg.Host.Addr).Class; c != Public {
				t.Fatalf("%q allowed the %s address %s", raw, c, tg.Host.Addr)
			}
		} else {
			if _, numeric, _ := ParseLegacyIPv4(tg.Host.Name); numeric {
				t.Fatalf("%q allowed numeric host %q as a name", raw, tg.Host.Name)
			}
			if len(addrs) == 0 || Classify(addrs[0]).Class != Public {
				t.Fatalf("%q allowed name %q resolving to %v", raw, tg.Host.Name, addrs)
			}
		}
		// Whatever the spelling, what Go's URL parser reads as the host
		// must be the same address the guard judged.
		if h := hostOf(raw); h != "" {
			if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil && Classify(a).Class != Public {
				t.Fatalf("%q allowed, but its host %s is %s", raw, a, Classify(a).Class)
			}
		}
	})
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
