package tags

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Encode builds a session tag from a base (a workflow id) and a suffix
// ("-<n>"), injectively: two different bases never give one tag, whatever
// their punctuation ("a:x/1" and "a-x-1" differ). Letters, digits, '-' and
// '.' (but not a leading '.') stay; '_' becomes "__"; any other byte becomes
// '_' and two hex digits. A result over MaxLen becomes "_h", 20 hex digits of
// the base's SHA-256, '-', the tail of the encoded base and the suffix, cut
// to MaxLen keeping the suffix: "_h" is no escape, so a hashed tag never
// equals an encoded one.
//
// Workflow code calls it (behind a version: see workflows.Browser.tagFor), so
// its output for a given input must never change.
func Encode(base, suffix string) string {
	enc := escape(base)
	if len(enc)+len(suffix) <= MaxLen {
		return enc + suffix
	}
	sum := sha256.Sum256([]byte(base))
	return squeeze("_h"+hex.EncodeToString(sum[:10])+"-", enc, suffix)
}

func escape(s string) string {
	if s == "" {
		return "_"
	}
	const digits = "0123456789abcdef"
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_':
			sb.WriteString("__")
		case c == '.' && i == 0:
			sb.WriteString("_2e")
		case allowed(rune(c)):
			sb.WriteByte(c)
		default:
			sb.WriteByte('_')
			sb.WriteByte(digits[c>>4])
			sb.WriteByte(digits[c&15])
		}
	}
	return sb.String()
}
