package driver

import (
	"embed"
	"strings"
)

// programs are the page-side JavaScript programs kept as files, so they
// read, diff and lint as JavaScript. Each is one function expression,
// run with its element as this; the comment beside its variable says what
// it returns.
//
//go:embed hit.js focus.js kind.js setvalue.js select.js checked.js
var programs embed.FS

// program returns the named program's source; a missing one is a build
// mistake the driver's tests catch at once.
func program(name string) string {
	b, err := programs.ReadFile(name)
	if err != nil {
		panic("driver: no page program " + name)
	}
	return strings.TrimSpace(string(b))
}
