package states

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func sealer(t testing.TB) *Sealer {
	t.Helper()
	s, err := NewSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealRoundTrip(t *testing.T) {
	s := sealer(t)
	pt := []byte(`{"name":"shop","cookies":[{"name":"sid","value":"secret-cookie-value"}]}`)
	a := aad(NameHash("shop"), 3)
	sealed, err := s.Seal(a, pt)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("secret-cookie-value")) || bytes.Contains(sealed, []byte("shop")) {
		t.Fatal("the sealed state holds its plaintext")
	}
	got, err := s.Open(a, sealed)
	if err != nil || !bytes.Equal(got, pt) {
		t.Fatalf("open: %q, %v", got, err)
	}
	again, _ := s.Seal(a, pt)
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of one state are equal: the nonce is not fresh")
	}
}

// Any change to a sealed state, or opening it as another name's or
// another version, or with another key, is ErrTampered.
func TestSealTamperDetection(t *testing.T) {
	s := sealer(t)
	a := aad(NameHash("shop"), 3)
	sealed, _ := s.Seal(a, []byte("state"))
	for i := range sealed {
		c := bytes.Clone(sealed)
		c[i] ^= 0x01
		if _, err := s.Open(a, c); !errors.Is(err, ErrTampered) {
			t.Fatalf("flipping byte %d: %v", i, err)
		}
	}
	cases := map[string]func() error{
		"other version": func() error { _, err := s.Open(aad(NameHash("shop"), 4), sealed); return err },
		"other name":    func() error { _, err := s.Open(aad(NameHash("crm"), 3), sealed); return err },
		"truncated":     func() error { _, err := s.Open(a, sealed[:len(sealed)-1]); return err },
		"empty":         func() error { _, err := s.Open(a, nil); return err },
		"other key": func() error {
			o, _ := NewSealer(bytes.Repeat([]byte{8}, 32))
			_, err := o.Open(a, sealed)
			return err
		},
	}
	for name, open := range cases {
		if err := open(); !errors.Is(err, ErrTampered) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseKey(t *testing.T) {
	if _, err := ParseKey("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "not base64!", "AAECAwQ="} {
		if _, err := ParseKey(bad); err == nil || !strings.Contains(err.Error(), EnvKey) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Version keys sort as their numbers, whatever S3's lexical order.
func TestVersionOrdering(t *testing.T) {
	vs := []int64{1, 9, 10, 11, 99, 100, 1000, 12345678901}
	var keys []string
	for _, v := range vs {
		keys = append(keys, VersionKey(v))
	}
	slices.Reverse(keys)
	slices.Sort(keys) // S3 lists keys in this order
	var got []int64
	for _, k := range keys {
		v, ok := ParseVersion(k)
		if !ok {
			t.Fatalf("%s does not parse", k)
		}
		got = append(got, v)
	}
	if !slices.Equal(got, vs) {
		t.Fatalf("listing order %v, want %v", got, vs)
	}
	for _, bad := range []string{"v/1", "v/0000000000000000000x", "lease.json", "v/00000000000000000000", "x/00000000000000000001"} {
		if _, ok := ParseVersion(bad); ok {
			t.Errorf("%q parsed as a version", bad)
		}
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"shop", "shop-alice", "a", "A.b_c-1", strings.Repeat("x", 64)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-shop", ".shop", "a..b", "a/b", "../x", "a b", "é", strings.Repeat("x", 65), "a\x00b"} {
		if err := ValidName(bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestAllowed(t *testing.T) {
	if !Allowed(nil, "any") || !Allowed([]string{"shop-*"}, "shop-alice") || Allowed([]string{"shop-*"}, "crm") {
		t.Fatal("globs")
	}
}

// A name ValidName admits is short and safe; its hash is a fixed-size
// key segment that never holds the name.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"shop", "a..b", "../../etc", "x/y", "", strings.Repeat("a", 70), "ok.name_1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidName(name)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) {
				t.Fatalf("%q: untyped error %v", name, err)
			}
			return
		}
		if len(name) == 0 || len(name) > MaxNameLen || strings.ContainsAny(name, "/\\ \x00") || strings.Contains(name, "..") {
			t.Fatalf("%q passed", name)
		}
		h := NameHash(name)
		if len(h) != 64 || !isHash(h) || strings.Contains(h, name) && len(name) > 3 {
			t.Fatalf("hash %q of %q", h, name)
		}
	})
}

// Merge keeps the storage of origins not shown now, and the cookie jar as
// read now.
func TestMerge(t *testing.T) {
	prev := &State{Name: "s", Cookies: []Cookie{{Name: "old", Domain: "a"}}, Origins: []Origin{
		{Origin: "https://a", Local: map[string]string{"k": "old"}},
		{Origin: "https://b", Local: map[string]string{"k": "b"}},
	}}
	now := State{Name: "s", Cookies: []Cookie{{Name: "new", Domain: "a"}}, Origins: []Origin{{Origin: "https://a", Local: map[string]string{"k": "new"}}}}
	m := Merge(prev, now)
	if len(m.Cookies) != 1 || m.Cookies[0].Name != "new" || len(m.Origins) != 2 || m.Origins[0].Local["k"] != "new" || m.Origins[1].Local["k"] != "b" {
		t.Fatalf("%+v", m)
	}
}
