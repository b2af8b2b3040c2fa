package driver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/go-rod/rod/lib/proto"
)

// fuzzSecret is registered with the renderer's redactor. Every window of 8
// characters holds an upper-case letter, so no lower-cased spelling of it
// is mistaken for a leak.
const fuzzSecret = "Kp4WmZ8rTq2XvN7bYc5HdJ3fLg9SsA6e"

var fuzzRoles = []string{
	"button", "link", "textbox", "combobox", "checkbox", "option", "clickable", "heading", "main",
	"navigation", "region", "dialog", "form", "banner", "list", "listitem", "group", "image",
	"paragraph", "table", "cell",
}

var fuzzFlags = []string{"selected", "disabled", "required", "focused", "readonly", "invalid", "multiselectable", "bogus"}

// walkDepth is walk.js's nesting bound (kids stops past depth 300).
const walkDepth = 302

// buildWalk turns fuzz bytes into a walk result. Each byte is an op in its
// low 3 bits and an argument in the rest; page text comes from text, split
// at '|' and repeated up to 32 times (up to 4 KiB) so that uncut text would show.
// The tree keeps walk.js's shape guarantees (roles from a fixed list, at
// most 12 options, each flag once, bounded depth); its strings are hostile.
func buildWalk(shape []byte, text string) walkResult {
	pieces := strings.Split(text, "|")
	np := 0
	secretNext := false
	piece := func(arg byte) string {
		p := pieces[np%len(pieces)]
		if len(p)*(1+int(arg)) <= 4096 { // long enough to pass every cut, short enough to fuzz fast
			p = strings.Repeat(p, 1+int(arg))
		}
		np++
		if secretNext {
			secretNext = false
			p = p[:len(p)/2] + fuzzSecret + p[len(p)/2:]
		}
		return p
	}
	var res walkResult
	var stack []*snode
	idx := 0
	add := func(n *snode) {
		if len(stack) == 0 {
			res.C = append(res.C, n)
		} else {
			top := stack[len(stack)-1]
			top.C = append(top.C, n)
		}
	}
	scoped := false
	for _, b := range shape {
		op, arg := b&7, b>>3
		var top *snode
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch op {
		case 0, 1:
			if len(stack) >= walkDepth {
				stack = stack[:len(stack)-1]
				continue
			}
			n := &snode{R: fuzzRoles[int(arg)%len(fuzzRoles)], I: idx}
			idx++
			if arg&1 == 0 {
				n.N = piece(arg)
			}
			add(n)
			stack = append(stack, n)
		case 2:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case 3:
			add(&snode{T: piece(arg)})
		case 4:
			if top == nil {
				continue
			}
			switch arg % 8 {
			case 0:
				top.Ck = []string{"true", "false", "mixed", piece(arg)}[arg/8%4]
			case 1:
				top.Pr = piece(arg)
			case 2:
				top.Ex = []string{"true", "false", piece(arg)}[arg/8%3]
			case 3:
				f := fuzzFlags[int(arg/8%4)+4*(idx%2)]
				if !contains(top.F, f) {
					top.F = append(top.F, f)
				}
			case 4:
				v := piece(arg)
				top.V = &v
			case 5:
				top.Pw = 1
			case 6:
				top.Lv = int(arg)
			case 7:
				top.No = int(arg)
				for len(top.O) < 12 && len(top.O) < top.No {
					top.O = append(top.O, piece(arg))
				}
			}
		case 5:
			if top != nil {
				top.H = piece(arg)
			}
		case 6:
			secretNext = true
		case 7:
			switch {
			case top == nil:
			case !scoped:
				top.Sc, scoped = 1, true
			default: // an iframe: what is under it becomes its own document (see frames)
				top.Fr = 1
			}
		}
	}
	return res
}

// frames gives each node marked as an iframe (fr) its own document made of
// the node's children, as walkPage links a child frame's walk under its
// owner, recursively: the renderer then walks nested frame documents, with
// ids from several documents. It returns every document, d first.
func frames(d *frameDoc, children map[*snode]*frameDoc) []*frameDoc {
	docs := []*frameDoc{d}
	var visit func(d *frameDoc, ns []*snode)
	visit = func(d *frameDoc, ns []*snode) {
		for _, n := range ns {
			if n == nil {
				continue
			}
			if n.Fr != 1 || len(n.C) == 0 {
				visit(d, n.C)
				continue
			}
			cd := &frameDoc{frameID: proto.PageFrameID(fmt.Sprintf("frame-%d", len(docs))), parent: d,
				res: walkResult{D: fmt.Sprintf("doc-%d", len(docs)), C: n.C}}
			n.C = nil
			children[n] = cd
			docs = append(docs, cd)
			visit(cd, cd.res.C)
		}
	}
	visit(d, d.res.C)
	return docs
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// shapeWalk holds a decoded walk result to walk.js's shape guarantees:
// nodes are objects, at most 12 options, each flag once, bounded depth,
// each element numbered once.
func shapeWalk(ns []*snode, depth int) []*snode {
	seen := map[int]bool{}
	next := 1 << 20
	var number func(ns []*snode)
	number = func(ns []*snode) {
		for _, n := range ns {
			if n == nil {
				continue
			}
			if seen[n.I] {
				next++
				n.I = next
			}
			seen[n.I] = true
			number(n.C)
		}
	}
	out := shapeNodes(ns, depth)
	number(out)
	return out
}

func shapeNodes(ns []*snode, depth int) []*snode {
	if depth >= walkDepth {
		return nil
	}
	kept := ns[:0]
	for _, n := range ns {
		if n == nil { // walk.js sends objects only (findScope would panic on null)
			continue
		}
		kept = append(kept, n)
		if len(n.R) > 40 {
			n.R = n.R[:40]
		}
		if len(n.O) > 12 {
			n.O = n.O[:12]
		}
		var fs []string
		for _, f := range n.F {
			if !contains(fs, f) {
				fs = append(fs, f)
			}
		}
		n.F = fs
		n.C = shapeNodes(n.C, depth+1)
	}
	return kept
}

func treeStats(ns []*snode, depth int, nodes, maxDepth *int) {
	for _, n := range ns {
		if n == nil {
			continue
		}
		*nodes++
		if depth > *maxDepth {
			*maxDepth = depth
		}
		treeStats(n.C, depth+1, nodes, maxDepth)
	}
}

func secretPiece(s string) string {
	for i := 0; i+8 <= len(fuzzSecret); i++ {
		if strings.Contains(s, fuzzSecret[i:i+8]) {
			return fuzzSecret[i : i+8]
		}
	}
	return ""
}

// maxLineBytes bounds one rendered line beyond its indent and id, from the
// renderer's cuts (runes; strconv.Quote spends at most 10 bytes a rune):
// role (40), name 150+1 quoted, pressed 10+1, value 100+1, 12 options of
// 60+1, a link of 150+1 runes (4 bytes each), folded text 300+1, fixed states.
const maxLineBytes = 40 + (2 + 151*10) + (12 + 11*10) + (9 + 102*10) + (14 + 12*(3+61*10)) + (4 + 151*4) + (3 + 301*10) + 200

var (
	idRE = regexp.MustCompile(`^( *)\[([0-9]+)\] `)
)

// FuzzSnapshotRender renders arbitrary walk results (what walk.js sends, as
// JSON when the input is one, else built from bytes by buildWalk), nodes
// marked as iframes holding nested frame documents, through the renderer a
// snapshot uses, full and interactive, at any size bound and offset, and
// scoped when a node is the scope. Properties: it never panics; no line is
// longer than its indent, id and maxLineBytes; a full rendering's indent
// follows the tree's depth, frames included, and no line is more than one
// level deeper than the line before it; an interactive listing is flat (no
// indent; a page after the first may repeat its section's header); a full rendering has no more lines than nodes
// and each id at most once (an interactive one repeats a heading or landmark
// only as the header of its elements); every id shown is one the refs
// resolve; a registered secret placed in page text never shows, not even 8
// characters of it.
func FuzzSnapshotRender(f *testing.F) {
	f.Add([]byte{0x00, 0x03, 0x0b, 0x02, 0x08, 0x1c, 0x02}, "Hello|world|x", uint16(2000), uint8(0), false)
	f.Add([]byte{0x38, 0x00, 0x06, 0x03, 0x02, 0x40, 0x09, 0x02, 0x00, 0x02, 0x02}, "Title|main text|Buy", uint16(80), uint8(0), true)
	f.Add([]byte{0x08, 0x06, 0x05, 0x02, 0x10, 0x3c, 0x02}, "/path?a=1&b=2#frag|sel", uint16(4000), uint8(1), false)
	f.Add([]byte{0x00, 0x06, 0x24, 0x2c, 0x14, 0x02, 0x06, 0x03}, "v|q", uint16(50), uint8(2), true)
	f.Add([]byte{0x38, 0x00, 0x48, 0x08, 0x02, 0x02, 0x00, 0x02, 0x00, 0x02}, "A|B|C", uint16(10), uint8(0), true)
	f.Add([]byte(`{"u":"https://x.test/","ti":"t","c":[{"r":"heading","n":"A","i":0,"lv":2},{"r":"main","i":1,"c":[{"t":"text"},{"r":"button","n":"Go","i":2,"f":["focused","focused"]}]}]}`), "", uint16(100), uint8(0), false)
	f.Add([]byte(`{"c":[{"r":"link","n":"x","i":0,"h":"https://x.test/a?token=1"},{"r":"combobox","i":1,"o":["a","b"],"no":40,"v":"a"},null]}`), "", uint16(0), uint8(1), true)
	f.Add([]byte(`{"c":[{"r":"main","i":0,"c":[{"r":"region","n":"F","i":1,"fr":1,"c":[{"r":"button","n":"In frame","i":2},{"r":"region","i":3,"fr":1,"c":[{"r":"heading","n":"Deep","i":4,"lv":2},{"r":"link","n":"deep","i":5,"h":"https://x.test/"}]}]}]}]}`), "", uint16(1000), uint8(0), false)
	f.Fuzz(func(t *testing.T, shape []byte, text string, max uint16, offset uint8, interactive bool) {
		var res walkResult
		if err := json.Unmarshal(shape, &res); err == nil {
			res.C = shapeWalk(res.C, 0)
		} else {
			res = buildWalk(shape, text)
		}
		nodes, depth := 0, 0
		treeStats(res.C, 0, &nodes, &depth)
		checkSecret := secretPiece(string(shape)) == "" && secretPiece(text) == ""

		red := redact.New()
		red.Register(fuzzSecret)
		b := &Browser{o: Options{Redact: red.String}}
		r := &renderer{b: b, pageURL: res.U, refs: map[int]ref{}, ids: newIDTable(""), ctxLine: -1, children: map[*snode]*frameDoc{}}
		d := &frameDoc{res: res}
		docs := frames(d, r.children)
		if n, sd := findScope(docs); n != nil && offset%2 == 1 {
			r.walk(n, sd, 0, "", false)
		} else {
			for _, n := range res.C {
				r.walk(n, d, 0, "", false)
			}
		}
		var pg page
		if interactive {
			pg = r.interactive(int(max), int(offset))
		} else {
			pg = r.full(int(max), int(offset))
		}
		out, cut := pg.text, pg.cut
		if checkSecret {
			if p := secretPiece(out + cut); p != "" {
				t.Fatalf("secret piece %q shows in the snapshot:\n%s", p, out)
			}
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if strings.TrimSuffix(out, "\n") == "" { // an empty page renders as "" or "\n"
			lines = nil
		}
		if !interactive && len(lines) > nodes {
			t.Fatalf("%d lines from %d nodes", len(lines), nodes)
		}
		seen := map[string]string{}
		prev := 0
		for i, l := range lines {
			indent := len(l) - len(strings.TrimLeft(l, " "))
			switch {
			case interactive && indent > 0:
				t.Fatalf("interactive line indented by %d: %.200q", indent, l)
			case indent > 2*depth:
				t.Fatalf("indent %d for a tree %d deep: %.200q", indent, depth, l)
			case indent%2 != 0 || (i > 0 && offset == 0 && !pg.truncated && indent > prev+2):
				t.Fatalf("indent %d after a line indented %d: %.200q", indent, prev, l)
			}
			prev = indent
			body := l[indent:]
			m := idRE.FindStringSubmatch(l)
			if m != nil {
				body = l[len(m[0]):]
				id := m[2]
				var n int
				for _, c := range id {
					n = n*10 + int(c-'0')
				}
				if _, ok := r.refs[n]; !ok {
					t.Fatalf("id [%s] shown but not resolvable: %.200q", id, l)
				}
				if prev, dup := seen[id]; dup {
					role := strings.SplitN(body, " ", 2)[0]
					if !interactive || prev != body || !(role == "heading" || landmarkRoles[role]) {
						t.Fatalf("id [%s] shown twice:\n%.200q\n%.200q", id, prev, body)
					}
				}
				seen[id] = body
			}
			if len(body) > maxLineBytes {
				t.Fatalf("line of %d bytes (bound %d): %.300q", len(body), maxLineBytes, l)
			}
		}
	})
}
