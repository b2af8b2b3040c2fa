package harness

import "strings"

// Ref finds the id of the first snapshot line holding want (such as
// `textbox "Email"`), reading each line as a model does: the interactive
// listing leaves out the role a line shares with the line above
// (`[4] "Password"` under `[3] textbox "User"`), so that role is put back
// before matching. It answers "" and false when no line holds want.
func Ref(text, want string) (string, bool) {
	role := ""
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		id, rest, ok := bracketed(l)
		if ok {
			if strings.HasPrefix(rest, `"`) {
				// Role left out: it is the line above's.
				line = strings.Replace(line, "] "+rest, "] "+role+" "+rest, 1)
			} else if f := strings.Fields(rest); len(f) > 0 {
				role = f[0]
			}
		}
		if ok && strings.Contains(line, want) {
			return id, true
		}
		if !ok && strings.Contains(line, want) {
			if i, j := strings.Index(line, "["), strings.Index(line, "]"); i >= 0 && j > i {
				return line[i+1 : j], true
			}
		}
	}
	return "", false
}

// bracketed splits "[id] rest" into id and rest.
func bracketed(l string) (id, rest string, ok bool) {
	if !strings.HasPrefix(l, "[") {
		return "", "", false
	}
	j := strings.IndexByte(l, ']')
	if j < 0 {
		return "", "", false
	}
	return l[1:j], strings.TrimSpace(l[j+1:]), true
}
