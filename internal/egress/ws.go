package egress

import (
	"encoding/binary"
	"fmt"
	"io"
)

// carry is how much of a fragment's end is kept to search together with
// the next fragment of the same message, so a secret split across two
// frames is still found (longer than every spelling of a secret of a
// reasonable length).
const carry = 4 << 10

// frames copies a WebSocket's frames from the page (r) to the server (w).
// While a typed secret is not bound to origin, each frame is read whole,
// unmasked and searched (with the end of the previous fragment of its
// message) before it is passed on; a frame carrying one is not passed on,
// and the refusal is returned. Without such a secret frames stream through
// unread.
func (p *Proxy) frames(r io.Reader, w io.Writer, origin, shown string) (Blocked, bool) {
	var hdr [14]byte
	var tail []byte
	for {
		if _, err := io.ReadFull(r, hdr[:2]); err != nil {
			return Blocked{}, false
		}
		n := 2
		opcode := hdr[0] & 0x0f
		rsv1 := hdr[0]&0x40 != 0
		masked := hdr[1]&0x80 != 0
		size := uint64(hdr[1] & 0x7f)
		switch size {
		case 126:
			if _, err := io.ReadFull(r, hdr[2:4]); err != nil {
				return Blocked{}, false
			}
			size, n = uint64(binary.BigEndian.Uint16(hdr[2:4])), 4
		case 127:
			if _, err := io.ReadFull(r, hdr[2:10]); err != nil {
				return Blocked{}, false
			}
			size, n = binary.BigEndian.Uint64(hdr[2:10]), 10
		}
		var key []byte
		if masked {
			if _, err := io.ReadFull(r, hdr[n:n+4]); err != nil {
				return Blocked{}, false
			}
			key = hdr[n : n+4]
			n += 4
		}
		m := p.armed.Load()
		first, scan := "", false
		if m != nil {
			first, scan = m.Unbound(origin)
		}
		if !scan {
			tail = nil
			if _, err := w.Write(hdr[:n]); err != nil {
				return Blocked{}, false
			}
			if _, err := io.CopyN(w, r, int64(size)); err != nil {
				return Blocked{}, false
			}
			continue
		}
		refuse := func(name, why string) (Blocked, bool) {
			return Blocked{Method: "WS", Origin: shown, Rule: RuleSecret, Secret: name,
				Message: fmt.Sprintf("%s is not one of the origins secret %s belongs to, and %s", shown, name, why)}, true
		}
		if rsv1 {
			return refuse(first, "a compressed WebSocket frame cannot be checked for the secret")
		}
		if size > uint64(p.o.MaxScan) {
			return refuse(first, "a WebSocket frame too long to check for the secret was refused")
		}
		// The payload and its text, counted against the worker's budget
		// while they are held.
		release, ok := reserve(2*int64(size) + int64(len(tail)))
		if !ok {
			return refuse(first, "the worker's buffer for checking frames stayed full, so a WebSocket frame could not be checked for the secret")
		}
		payload := make([]byte, size)
		if _, err := io.ReadFull(r, payload); err != nil {
			release()
			return Blocked{}, false
		}
		unmask := func() { // its own inverse
			if masked {
				for i := range payload {
					payload[i] ^= key[i%4]
				}
			}
		}
		unmask()
		text := string(tail) + string(payload)
		unmask()
		if name, ok := m.Find(origin, text); ok {
			release()
			return refuse(name, "a WebSocket frame carries the secret")
		}
		// Control frames (opcode 8 and up) may come between the fragments
		// of a message; only data frames carry its text on.
		if opcode < 8 {
			if hdr[0]&0x80 != 0 { // FIN: the message ends here
				tail = nil
			} else {
				tail = []byte(text)
				if len(tail) > carry {
					tail = tail[len(tail)-carry:]
				}
			}
		}
		_, err := w.Write(hdr[:n])
		if err == nil {
			_, err = w.Write(payload)
		}
		release()
		if err != nil {
			return Blocked{}, false
		}
	}
}
