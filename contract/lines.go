package contract

import "strings"

// LineIDs are the element ids of the snapshot text's lines that hold
// needle, in order: a line `[e4] textbox "Email"` gives e4. A line with no
// [id] gives none.
func LineIDs(text, needle string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, needle) {
			continue
		}
		i, j := strings.Index(line, "["), strings.Index(line, "]")
		if i >= 0 && j > i {
			out = append(out, line[i+1:j])
		}
	}
	return out
}
