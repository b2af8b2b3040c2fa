package tags

import (
	"strings"
	"testing"
)

func TestEncode(t *testing.T) {
	long := strings.Repeat("orchestrator/conversation:", 4)
	tests := []struct{ base, suffix, want string }{
		{"conv-42", "-1", "conv-42-1"},
		{"a:x/1", "-1", "a_3ax_2f1-1"},
		{"a-x-1", "-1", "a-x-1-1"},
		{"a_b", "-2", "a__b-2"},
		{".", "", "_2e"},
		{"..", "-1", "_2e.-1"},
		{"", "-1", "_-1"},
		{"é", "-1", "_c3_a9-1"},
	}
	for _, tt := range tests {
		if got := Encode(tt.base, tt.suffix); got != tt.want {
			t.Errorf("Encode(%q, %q) = %q, want %q", tt.base, tt.suffix, got, tt.want)
		}
	}
	got := Encode(long, "-1")
	if len(got) != MaxLen || !strings.HasPrefix(got, "_h") || !strings.HasSuffix(got, "-1") {
		t.Errorf("Encode(long) = %q: want %d characters, the hash mark and the suffix", got, MaxLen)
	}
	if Encode(long, "-1") == Encode(strings.Replace(long, "orchestrator", "orchestrateur", 1), "-1") {
		t.Error("two long bases share a tag")
	}
	// The look-alikes that legacy cleaning merged stay apart.
	if Encode("a:x/1", "-1") == Encode("a-x-1", "-1") || Clean("a:x/1", "-1") != Clean("a-x-1", "-1") {
		t.Error("look-alike ids: Encode must keep them apart (and Clean is the legacy scheme that merged them)")
	}
}

// FuzzEncode: every tag is valid, and two different bases never share one.
func FuzzEncode(f *testing.F) {
	for _, s := range [][2]string{{"conv-42", "a:x/1"}, {"a-x-1", "a:x/1"}, {"_2f", "/"}, {"__", "_"}, {".", "_2e"}, {"", "_"}, {strings.Repeat("x", 70), strings.Repeat("x", 71)}} {
		f.Add(s[0], s[1], 3)
	}
	f.Fuzz(func(t *testing.T, a, b string, n int) {
		suffix := "-" + strings.Repeat("1", 1+(n&3))
		ta, tb := Encode(a, suffix), Encode(b, suffix)
		if err := Valid(ta); err != nil {
			t.Fatalf("Encode(%q) = %q: %v", a, ta, err)
		}
		if a != b && ta == tb {
			t.Fatalf("Encode(%q) == Encode(%q) == %q", a, b, ta)
		}
	})
}
