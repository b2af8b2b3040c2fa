package evidence

import (
	"encoding/base64"
	"mime"
	"strings"
	"unicode/utf8"
)

// InlineBudget is how many bytes of a body may ride inline in an activity
// result, beside its claim check. Zero means DefaultInlineBudget; a negative
// budget never inlines.
type InlineBudget int

// DefaultInlineBudget keeps results small: Temporal history carries them.
const DefaultInlineBudget InlineBudget = 8 << 10

// Inline encodings of ClaimCheck.InlineEncoding.
const (
	InlineText   = ""       // Inline holds the body as UTF-8 text
	InlineBase64 = "base64" // Inline holds the body base64-encoded (images only)
)

// Inline returns the body as it may ride inline: text-like bodies that are
// valid UTF-8 as text, images base64-encoded, each only when the inline form
// fits the budget. Anything else, or anything larger, goes by reference only
// (ok is false).
func (b InlineBudget) Inline(contentType string, body []byte) (inline, encoding string, ok bool) {
	limit := int(b)
	if b == 0 {
		limit = int(DefaultInlineBudget)
	}
	if limit <= 0 {
		return "", "", false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	switch {
	case isTextType(mt):
		if len(body) > limit || !utf8.Valid(body) {
			return "", "", false
		}
		return string(body), InlineText, true
	case strings.HasPrefix(mt, "image/"):
		if base64.StdEncoding.EncodedLen(len(body)) > limit {
			return "", "", false
		}
		return base64.StdEncoding.EncodeToString(body), InlineBase64, true
	}
	return "", "", false
}

func isTextType(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/x-ndjson",
		"application/xhtml+xml", "application/ld+json", "image/svg+xml":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}
