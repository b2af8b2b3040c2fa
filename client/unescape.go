package client

import "bytes"

// unescapeHTML undoes the HTML escaping encoding/json applies on the way
// through Temporal (\u003c, \u003e, \u0026 for <, > and &), so a model
// reads "->" and page fences as the characters the answer's size counted,
// not six each. Escapes elsewhere, and an escaped backslash followed by
// "u003c", are kept as they are.
func unescapeHTML(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`\u00`)) {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 == len(raw) {
			out = append(out, raw[i])
			continue
		}
		if raw[i+1] == 'u' && i+6 <= len(raw) {
			switch string(raw[i+2 : i+6]) {
			case "003c", "003C":
				out = append(out, '<')
				i += 5
				continue
			case "003e", "003E":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		// Any other escape: keep it whole, so its second character is
		// never read as the start of another.
		out = append(out, raw[i], raw[i+1])
		i++
	}
	return out
}
