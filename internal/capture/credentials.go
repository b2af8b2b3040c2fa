package capture

import (
	"strings"

	"golang.org/x/net/html"
)

// credentialWords mark an input whose value is a credential when its name,
// id or autocomplete holds one (as the snapshot hides them).
var credentialWords = []string{"password", "passwd", "pwd", "passcode", "secret", "token", "api_key", "apikey",
	"api-key", "otp", "one-time-code", "cc-number", "cc-csc", "cvv", "cvc", "pin"}

// BlankCredentials returns doc with the value attribute of every password
// input, and of every input whose name, id or autocomplete says it holds a
// credential, emptied. Everything else is kept byte for byte: only those
// tags are written anew.
func BlankCredentials(doc string) string {
	if !strings.Contains(strings.ToLower(doc), "<input") {
		return doc
	}
	z := html.NewTokenizer(strings.NewReader(doc))
	var b strings.Builder
	b.Grow(len(doc))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return b.String()
		}
		raw := z.Raw()
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			b.Write(raw)
			continue
		}
		tok := z.Token()
		if tok.Data != "input" || !holdsCredential(tok.Attr) {
			b.Write(raw)
			continue
		}
		for i := range tok.Attr {
			if strings.EqualFold(tok.Attr[i].Key, "value") {
				tok.Attr[i].Val = ""
			}
		}
		b.WriteString(tok.String())
	}
}

func holdsCredential(attrs []html.Attribute) bool {
	for _, a := range attrs {
		key, val := strings.ToLower(a.Key), strings.ToLower(a.Val)
		switch key {
		case "type":
			if strings.TrimSpace(val) == "password" {
				return true
			}
		case "name", "id", "autocomplete":
			for _, w := range credentialWords {
				if strings.Contains(val, w) {
					return true
				}
			}
		}
	}
	return false
}
