package jsengine

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// A cell's code runs as the body of an async function, so that await and
// return work at the top level: the engine compiles cellHead + code +
// cellTail, named cellName. cellHead shares the code's first line, so every
// line keeps its number and only columns on line 1 move (by len(cellHead));
// cellTail is a line of its own after the code's last. What the engine says
// in the compiled program's positions is mapped back to the code's own
// (codeMap) before anyone reads it, and nothing in the wrapper is shown as
// the code's.
const (
	cellName = "cell.js"
	cellHead = "(async function(){"
	cellTail = "\n})()"
	// builtinsName names the engine's own JavaScript (api.go's harden):
	// its frames show as native ones, never by its lines.
	builtinsName = "builtins"
)

// codeMap maps positions of the compiled program to the code's own.
type codeMap struct {
	// lines are the code's lines (line 1 without cellHead), split where
	// the engine splits them; the tail's line is not among them.
	lines []string
}

func newCodeMap(src string) codeMap {
	// Split the compiled text, not the code: a code ending in "\r" makes
	// one line end of it and the tail's "\n", as the engine counts.
	lines := splitLines(cellHead + src + cellTail)
	lines = lines[:len(lines)-1]
	lines[0] = lines[0][len(cellHead):]
	return codeMap{lines: lines}
}

// splitLines splits s at the line terminators the engine counts (\r\n, \r,
// \n, U+2028, U+2029; see goja's file.Position).
func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			out, i, start = append(out, s[start:i]), i+2, i+2
		case r == '\r' || r == '\n' || r == '\u2028' || r == '\u2029':
			out, i, start = append(out, s[start:i]), i+n, i+n
		default:
			i += n
		}
	}
	return append(out, s[start:])
}

// code maps a position of the compiled program (line, and column in bytes,
// both from 1) to the code's line and column (in characters, from 1); ok is
// false for a position in the wrapper around it.
func (m codeMap) code(line, col int) (codeLine, codeCol int, ok bool) {
	if line < 1 || line > len(m.lines) {
		return 0, 0, false
	}
	if line == 1 {
		if col -= len(cellHead); col < 1 {
			return 0, 0, false
		}
	}
	text := m.lines[line-1]
	return line, utf8.RuneCountInString(text[:min(max(col-1, 0), len(text))]) + 1, true
}

// end is the position just past the code's last character.
func (m codeMap) end() (line, col int) {
	n := len(m.lines)
	if n == 0 {
		return 1, 1
	}
	return n, utf8.RuneCountInString(m.lines[n-1]) + 1
}

// compile compiles the cell's code, or says where and why it does not
// parse, by the code's own line and column.
func compile(src string) (*goja.Program, *Error) {
	m := newCodeMap(src)
	// No source maps: a sourceMappingURL comment would have the engine
	// read a file of the host.
	prg, err := parser.ParseFile(nil, cellName, cellHead+src+cellTail, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, m.syntaxError(src, err)
	}
	p, err := goja.CompileAST(prg, false)
	if err != nil {
		return nil, m.syntaxError(src, err)
	}
	return p, nil
}

// syntaxError describes the engine's parse or compile error err by the
// code's line and column. The engine reports only the first error that
// matters: those after it mostly follow from it.
func (m codeMap) syntaxError(src string, err error) *Error {
	kind, msg, pos := "SyntaxError", "", file.Position{}
	var list parser.ErrorList
	var se *goja.CompilerSyntaxError
	var re *goja.CompilerReferenceError
	switch {
	case errors.As(err, &list) && len(list) > 0:
		msg, pos = list[0].Message, list[0].Position
	case errors.As(err, &se):
		msg = se.Message
		if se.File != nil {
			pos = se.File.Position(se.Offset)
		}
	case errors.As(err, &re):
		kind, msg = "ReferenceError", re.Message
		if re.File != nil {
			pos = re.File.Position(re.Offset)
		}
	default:
		// Not one the engine describes by position.
		return &Error{Kind: KindCode, Message: "the code does not parse: " + err.Error()}
	}
	if msg == "Unexpected token ILLEGAL" {
		msg += " (a string left open at its line's end, or a character JavaScript does not allow there)"
	}
	if line, col, ok := m.code(pos.Line, pos.Column); ok {
		return &Error{Kind: KindCode, Message: fmt.Sprintf("the code does not parse: %s at line %d, column %d: %s", kind, line, col, msg)}
	}
	// The engine met the wrapper's end: the code stopped before something
	// it began was complete, or closed the function it runs in early.
	line, col := m.end()
	why := "the code ends before something it began is complete (a parenthesis, bracket, brace, string, template, comment or statement is left open)"
	if extraBrace(src) {
		why = "there is a } too many: the code closes more blocks than it opens"
	}
	return &Error{Kind: KindCode, Message: fmt.Sprintf("the code does not parse: %s at line %d, column %d (the end of the code): %s", kind, line, col, why)}
}

// extraBrace reports whether src, run as a function's body, closes that
// function before its end: as a declaration followed by a return, the return
// is then outside any function.
func extraBrace(src string) bool {
	const head = "async function cell(){"
	probe := head + src + "\nreturn;}"
	_, err := parser.ParseFile(nil, cellName, probe, 0, parser.WithDisableSourceMaps)
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return false
	}
	return list[0].Message == "Illegal return statement" && list[0].Position.Line == len(splitLines(probe))
}

// A stack frame as the engine writes it: "name (file:line:col(pc))" or
// "file:line:col(pc)", and "name (native)" or "native".
var (
	namedFrame = regexp.MustCompile(`^(.*) \(([^\s()]+):(\d+):(\d+)\(\d+\)\)$`)
	bareFrame  = regexp.MustCompile(`^([^\s()]+):(\d+):(\d+)\(\d+\)$`)
)

// frame is one line of a stack, rewritten.
type frame struct {
	text    string
	builtin bool
	// line and col are the code's, for a frame in it (else 0).
	line, col int
}

// stack rewrites a stack the engine wrote for the model: frames in the
// code by its own lines and columns, none of the wrapper's, the engine's
// own JavaScript and Go functions as native, no program counters.
func (m codeMap) stack(s string) (string, []frame) {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	head := len(lines)
	for head > 0 && strings.HasPrefix(lines[head-1], "\tat ") {
		head--
	}
	var frames []frame
	for _, l := range lines[head:] {
		f, keep := m.frame(strings.TrimPrefix(l, "\tat "))
		if !keep {
			continue
		}
		if n := len(frames); n > 0 && f.builtin && frames[n-1].builtin {
			// A builtin calling its helpers: the one the code called
			// (the outermost) stands for them.
			frames[n-1] = f
			continue
		}
		frames = append(frames, f)
	}
	out := lines[:head:head]
	for _, f := range frames {
		out = append(out, "\tat "+f.text)
	}
	return strings.Join(out, "\n"), frames
}

func (m codeMap) frame(s string) (frame, bool) {
	name, where, line, col := "", "", 0, 0
	if g := namedFrame.FindStringSubmatch(s); g != nil {
		name, where = g[1], g[2]
		line, _ = strconv.Atoi(g[3])
		col, _ = strconv.Atoi(g[4])
	} else if g := bareFrame.FindStringSubmatch(s); g != nil {
		where = g[1]
		line, _ = strconv.Atoi(g[2])
		col, _ = strconv.Atoi(g[3])
	} else if s == "native" {
		return frame{text: native("")}, true
	} else if n, ok := strings.CutSuffix(s, " (native)"); ok {
		return frame{text: native(n)}, true
	} else {
		return frame{text: s}, true // not the engine's: the cell wrote it
	}
	named := func(at string) string {
		if name == "" {
			return at
		}
		return name + " (" + at + ")"
	}
	switch where {
	case cellName:
		l, c, ok := m.code(line, col)
		if !ok {
			return frame{}, false // the wrapper calling the code
		}
		return frame{text: named(fmt.Sprintf("%s:%d:%d", cellName, l, c)), line: l, col: c}, true
	case builtinsName:
		return frame{text: native(name), builtin: true}, true
	}
	// Code the cell built (eval, Function): its own positions.
	return frame{text: named(fmt.Sprintf("%s:%d:%d", where, line, col))}, true
}

// native writes a native frame: a Go function's name (a package path) is
// the engine's business, not the code's.
func native(name string) string {
	if name == "" || strings.ContainsAny(name, "/*") {
		return "native"
	}
	return name + " (native)"
}
