package driver

import (
	"embed"
	"strings"
)

// programFiles are the page-side JavaScript programs, kept as files under
// js/ so they read, diff and lint as JavaScript. Each file opens with a
// comment on what it is run on and what it returns; the rest is one named
// function declaration (run by Runtime.callFunctionOn, or called by call
// when it is evaluated as a script), except eval.js, a template.
//
//go:embed js/*.js
var programFiles embed.FS

// program returns the named program without its opening comment. A
// missing file is a build mistake: it panics when the package loads, so
// every test of the package catches it.
func program(name string) string {
	raw, err := programFiles.ReadFile("js/" + name)
	if err != nil {
		panic("driver: no page program " + name)
	}
	lines := strings.Split(string(raw), "\n")
	for len(lines) > 0 && strings.HasPrefix(lines[0], "//") {
		lines = lines[1:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// invoke is an expression that calls program src (a function declaration,
// made an expression by the parentheses) with args, each already
// JavaScript source.
func invoke(src string, args ...string) string {
	return "(" + src + ")(" + strings.Join(args, ", ") + ")"
}
