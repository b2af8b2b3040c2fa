package states

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzOpen: opening any bytes never panics, and yields a state only for
// exactly what Seal made under the same key and aad: arbitrary bytes, a
// sealed blob with any byte changed, cut or lengthened, one opened under
// another aad (another name or version) or another key all fail with
// ErrTampered.
func FuzzOpen(f *testing.F) {
	f.Add([]byte("DBST1"), []byte(`{"cookies":[]}`), "name-hash/v1", uint16(0), byte(1), int8(0))
	f.Add([]byte{}, []byte{}, "", uint16(40), byte(0), int8(-3))
	f.Add(append([]byte("DBST1"), make([]byte, 40)...), []byte("x"), "a", uint16(5), byte(0x80), int8(2))
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	s1, err := NewSealer(k1)
	if err != nil {
		f.Fatal(err)
	}
	s2, err := NewSealer(k2)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, junk, plaintext []byte, aad string, at uint16, flip byte, resize int8) {
		if pt, err := s1.Open(aad, junk); err == nil {
			t.Fatalf("arbitrary bytes %x opened as %q", junk, pt)
		} else if !errors.Is(err, ErrTampered) {
			t.Fatalf("open of arbitrary bytes: %v, want ErrTampered", err)
		}
		sealed, err := s1.Seal(aad, plaintext)
		if err != nil {
			t.Fatal(err)
		}
		if pt, err := s1.Open(aad, sealed); err != nil || !bytes.Equal(pt, plaintext) {
			t.Fatalf("round trip: %q %v", pt, err)
		}
		if _, err := s2.Open(aad, sealed); !errors.Is(err, ErrTampered) {
			t.Fatalf("opened under another key: %v", err)
		}
		if _, err := s1.Open(aad+"x", sealed); !errors.Is(err, ErrTampered) {
			t.Fatalf("opened under another aad: %v", err)
		}
		changed := append([]byte(nil), sealed...)
		switch {
		case resize > 0:
			changed = append(changed, bytes.Repeat([]byte{flip}, int(resize))...)
		case resize < 0:
			changed = changed[:max(0, len(changed)+int(resize))]
		}
		if flip != 0 && len(changed) > 0 {
			changed[int(at)%len(changed)] ^= flip
		}
		if bytes.Equal(changed, sealed) {
			return
		}
		if pt, err := s1.Open(aad, changed); !errors.Is(err, ErrTampered) {
			t.Fatalf("a changed blob opened: %q %v", pt, err)
		}
	})
}
