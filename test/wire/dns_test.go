package wire

import (
	"net"
	"strings"
	"sync"
	"testing"
)

// dnsRecorder is the worker's DNS server in the leak scan (--dns-server): it
// writes down every name it is asked for and answers each "no such name",
// so no lookup ever leaves loopback. A secret the worker put into a name
// would be in names.
type dnsRecorder struct {
	conn  net.PacketConn
	mu    sync.Mutex
	names []string
}

func startDNSRecorder(t *testing.T) *dnsRecorder {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &dnsRecorder{conn: pc}
	t.Cleanup(func() { _ = pc.Close() })
	go r.serve()
	return r
}

func (r *dnsRecorder) addr() string { return r.conn.LocalAddr().String() }

func (r *dnsRecorder) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := r.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		q := buf[:n]
		name, end, ok := questionName(q)
		if !ok {
			continue
		}
		r.mu.Lock()
		r.names = append(r.names, name)
		r.mu.Unlock()
		// The header and question echoed back: a response (QR), recursion
		// available, NXDOMAIN, no answers.
		resp := append([]byte(nil), q[:end]...)
		resp[2] |= 0x80
		resp[3] = 0x80 | 3
		for i := 6; i < 12; i++ {
			resp[i] = 0
		}
		_, _ = r.conn.WriteTo(resp, from)
	}
}

// questionName reads the first question's name of a DNS query, and where
// the question ends (after its type and class).
func questionName(q []byte) (string, int, bool) {
	if len(q) < 12 || q[4] != 0 || q[5] == 0 {
		return "", 0, false
	}
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return "", 0, false
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return "", 0, false
		}
		labels = append(labels, string(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return "", 0, false
	}
	return strings.Join(labels, "."), i + 4, true
}

func (r *dnsRecorder) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}

func TestQuestionName(t *testing.T) {
	q := []byte{0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'w', 'w', 'w', 4, 'e', 'v', 'i', 'l', 0, 0, 1, 0, 1}
	name, end, ok := questionName(q)
	if !ok || name != "www.evil" || end != len(q) {
		t.Fatalf("questionName = %q, %d, %v", name, end, ok)
	}
	for _, bad := range [][]byte{nil, q[:11], q[:20], append(append([]byte(nil), q[:12]...), 70)} {
		if _, _, ok := questionName(bad); ok {
			t.Errorf("questionName(%v) accepted", bad)
		}
	}
}
