package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestForModel(t *testing.T) {
	run := func(args string) ToolCall { return ToolCall{Name: ToolRun, Args: json.RawMessage(args)} }
	click := run(`{"actions":[{"op":"click","id":"4"}],"observe":true}`)
	for _, tc := range []struct {
		name   string
		call   ToolCall
		answer string
		want   string
	}{
		{"a click seen as changes on the same page: the url, no title, counts or size", click,
			`{"ok":true,"url":"http://a.test/c","title":"C","completed":1,"total":1,"observed":{"text":"~ [5] status","epoch":3,"elements":5,"interactive":2,"changes":{"changed":1}},"size":{"chars":9,"tokens":3}}`,
			`{"url":"http://a.test/c","observed":{"text":"~ [5] status","epoch":3,"changes":{"changed":1}}}`},
		{"changes on the page the model last looked at: no url either", click,
			`{"ok":true,"url":"http://a.test/c","title":"C","completed":1,"total":1,"observed":{"text":"~ [5] status","epoch":3,"elements":5,"interactive":2,"changes":{"changed":1,"same_page":true}}}`,
			`{"observed":{"text":"~ [5] status","epoch":3,"changes":{"changed":1}}}`},
		{"the title changed in place: it stays", click,
			`{"ok":true,"url":"http://a.test/c","title":"C (2)","completed":1,"total":1,"observed":{"text":"","epoch":3,"elements":5,"interactive":2,"changes":{"title":true}}}`,
			`{"url":"http://a.test/c","title":"C (2)","observed":{"text":"","epoch":3,"changes":{"title":true}}}`},
		{"a goto seen whole: the title says where, the url was asked for", run(`{"actions":[{"op":"goto","url":"http://a.test/f"}],"observe":"interactive"}`),
			`{"ok":true,"url":"http://a.test/f","title":"F","completed":1,"total":1,"observed":{"text":"[1] button","epoch":1,"elements":3,"interactive":1,"changes":{"full":true,"reason":"the page navigated"}}}`,
			`{"title":"F","observed":{"text":"[1] button","epoch":1}}`},
		{"a goto that was redirected: the url stays", run(`{"actions":[{"op":"goto","url":"http://a.test/old"}]}`),
			`{"ok":true,"url":"http://a.test/new","title":"N","completed":1,"total":1}`,
			`{"url":"http://a.test/new","title":"N"}`},
		{"a goto followed by a click that went elsewhere: the url stays", run(`{"actions":[{"op":"goto","url":"http://a.test/f"},{"op":"click","id":"2"}]}`),
			`{"ok":true,"url":"http://a.test/g","title":"G","completed":2,"total":2}`,
			`{"url":"http://a.test/g","title":"G"}`},
		{"whole for another reason: the reason stays", click,
			`{"ok":true,"url":"http://a.test/c","title":"C","completed":1,"total":1,"observed":{"text":"x","epoch":2,"elements":1,"interactive":0,"changes":{"full":true,"reason":"the active tab changed"}}}`,
			`{"url":"http://a.test/c","title":"C","observed":{"text":"x","epoch":2,"changes":{"full":true,"reason":"the active tab changed"}}}`},
		{"a cut observation keeps its counts", click,
			`{"ok":true,"url":"http://a.test/c","title":"C","completed":1,"total":1,"observed":{"text":"x","epoch":2,"elements":900,"interactive":400,"truncated":true,"next_offset":1,"changes":{"full":true,"reason":"the page navigated"}}}`,
			`{"url":"http://a.test/c","title":"C","observed":{"text":"x","epoch":2,"elements":900,"interactive":400,"truncated":true,"next_offset":1}}`},
		{"a run that stopped keeps completed, total and failed", run(`{"actions":[{"op":"click","id":"1"},{"op":"click","id":"2"}]}`),
			`{"ok":true,"url":"http://a.test/c","title":"C","completed":1,"total":2,"failed":{"index":1,"op":"click","reason":"x"}}`,
			`{"url":"http://a.test/c","title":"C","completed":1,"total":2,"failed":{"index":1,"op":"click","reason":"x"}}`},
		{"requests to the page's origin name only their path", run(`{"actions":[{"op":"click","id":"12"}]}`),
			`{"ok":true,"url":"http://a.test/submit","title":"Thanks","completed":1,"total":1,"sent":[{"method":"POST","origin":"http://a.test","path":"/submit"},{"method":"POST","origin":"http://b.test","path":"/track"}],"held":[{"hold_id":"h","method":"POST","origin":"http://a.test","path":"/pay","decision":"approved"}]}`,
			`{"url":"http://a.test/submit","title":"Thanks","sent":[{"method":"POST","path":"/submit"},{"method":"POST","origin":"http://b.test","path":"/track"}],"held":[{"hold_id":"h","method":"POST","path":"/pay","decision":"approved"}]}`},
		{"a snapshot keeps its url and title, not its counts; its page text follows the JSON, to the end of the answer", ToolCall{Name: ToolSnapshot, Args: json.RawMessage(`{}`)},
			`{"ok":true,"url":"http://a.test/c","title":"C","text":"<<page n m>>\n[1] link \"a\"\n<<end n m>>","epoch":2,"elements":1,"interactive":1,"viewport":"1280x720","size":{"chars":1,"tokens":1}}`,
			"{\"url\":\"http://a.test/c\",\"title\":\"C\",\"epoch\":2,\"viewport\":\"1280x720\"}\n<<page n m>>\n[1] link \"a\""},
		{"a run's observed page text follows the JSON", run(`{"actions":[{"op":"goto","url":"http://a.test/f"}],"observe":"interactive"}`),
			`{"ok":true,"url":"http://a.test/f","title":"F","completed":1,"total":1,"observed":{"text":"<<page n>>\n[1] button\n<<end n>>","epoch":1,"changes":{"full":true,"reason":"the page navigated"}}}`,
			"{\"title\":\"F\",\"observed\":{\"epoch\":1}}\n<<page n>>\n[1] button"},
		{"text that is not one fenced block stays in the JSON", ToolCall{Name: ToolSnapshot},
			`{"ok":true,"text":"<<page n>>\n[1] a\n<<end n>>\nx\n<<end n>>","epoch":2}`,
			`{"text":"<<page n>>\n[1] a\n<<end n>>\nx\n<<end n>>","epoch":2}`},
		{"a fence whose end has another code stays in the JSON", ToolCall{Name: ToolSnapshot},
			`{"ok":true,"text":"<<page n>>\n[1] a\n<<end m>>","epoch":2}`,
			`{"text":"<<page n>>\n[1] a\n<<end m>>","epoch":2}`},
		{"read content that is fenced follows the JSON", ToolCall{Name: ToolRead},
			`{"ok":true,"url":"http://a.test/c","title":"C","what":"page","content":"<<page n>>\n<a>&\n<<end n>>","full_length":3}`,
			"{\"url\":\"http://a.test/c\",\"title\":\"C\",\"what\":\"page\",\"full_length\":3}\n<<page n>>\n<a>&"},
		{"a failure keeps everything but its size", click,
			`{"ok":false,"code":"stale_snapshot","message":"take a snapshot","size":{"chars":1,"tokens":1}}`,
			`{"ok":false,"code":"stale_snapshot","message":"take a snapshot"}`},
		{"unfenced content: only ok and size go", ToolCall{Name: ToolRead},
			`{"ok":true,"url":"http://a.test/c","title":"C","what":"url","content":"<a>&","full_length":3}`,
			`{"url":"http://a.test/c","title":"C","what":"url","content":"<a>&","full_length":3}`},
		{"not an object: unchanged", click, `[1,2]`, `[1,2]`},
		{"not JSON: unchanged", click, `{"ok":tr`, `{"ok":tr`},
		{"two objects: unchanged", click, `{"ok":true}{"ok":true}`, `{"ok":true}{"ok":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(ForModel(tc.call, json.RawMessage(tc.answer)))
			if got != tc.want {
				t.Fatalf("ForModel\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FuzzForModel: whatever an answer holds, ForModel never panics, answers
// valid JSON for valid JSON (followed by the page text it moved out, when
// it did, less its fence's last line), and only leaves fields out: every value it keeps, at any depth,
// is the answer's, and page text it moves out is the answer's own.
func FuzzForModel(f *testing.F) {
	f.Add("run", `{"actions":[{"op":"goto","url":"http://a.test/f"}]}`, `{"ok":true,"url":"http://a.test/f","title":"F","completed":1,"total":1,"observed":{"text":"x","epoch":1,"changes":{"full":true,"reason":"the page navigated"}},"sent":[{"method":"POST","origin":"http://a.test","path":"/"}]}`)
	f.Add("run", `{}`, `{"ok":true,"observed":{"changes":{}},"url":"x","url":"y"}`)
	f.Add("snapshot", `{}`, `{"ok":true,"text":"t","elements":3,"interactive":1,"truncated":true}`)
	f.Add("snapshot", `{}`, `{"ok":true,"text":"<<page a b>>\n[1] \"x\"\n<<end a b>>","epoch":1}`)
	f.Add("run", `{}`, `{"ok":true,"observed":{"text":"<<page a>>\n~ [1] x\n<<end a>>","epoch":1}}`)
	f.Add("run", `[]`, `{"ok":false,"size":1}`)
	f.Fuzz(func(t *testing.T, tool, args, answer string) {
		out := ForModel(ToolCall{Name: tool, Args: json.RawMessage(args)}, json.RawMessage(answer))
		if !json.Valid([]byte(answer)) {
			return
		}
		head, text, moved := strings.Cut(out, "\n"+fenceOpenPrefix)
		if !json.Valid([]byte(head)) {
			t.Fatalf("ForModel(%s) = %s: not JSON", answer, out)
		}
		var in, got any
		if json.Unmarshal([]byte(answer), &in) != nil || json.Unmarshal([]byte(head), &got) != nil {
			return
		}
		if moved {
			// The fence's first line and the text; its last line, which
			// would end the answer, is left out.
			text = fenceOpenPrefix + text
			first, _, _ := strings.Cut(text, "\n")
			code := strings.TrimSuffix(strings.TrimPrefix(first, fenceOpenPrefix), fenceSuffix)
			text += "\n" + FenceClose(code)
			if !isFenced(text) || !holds(in, text) {
				t.Fatalf("ForModel(%s) = %s: the page text after the JSON is not the answer's", answer, out)
			}
		}
		if path, ok := keptFrom(got, in, "$"); !ok {
			t.Fatalf("ForModel(%s) = %s: %s is not the answer's", answer, out, path)
		}
	})
}

// holds says whether v holds the string s at any depth.
func holds(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return v == s
	case map[string]any:
		for _, w := range v {
			if holds(w, s) {
				return true
			}
		}
	case []any:
		for _, w := range v {
			if holds(w, s) {
				return true
			}
		}
	}
	return false
}

// keptFrom says whether got is in with members left out of its objects
// (at any depth, in lists too), and where not.
func keptFrom(got, in any, path string) (string, bool) {
	switch g := got.(type) {
	case map[string]any:
		m, ok := in.(map[string]any)
		if !ok {
			return path, false
		}
		for k, v := range g {
			w, ok := m[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := keptFrom(v, w, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		l, ok := in.([]any)
		if !ok || len(l) != len(g) {
			return path, false
		}
		for i := range g {
			if p, ok := keptFrom(g[i], l[i], path+"[]"); !ok {
				return p, false
			}
		}
		return "", true
	default:
		x, _ := json.Marshal(got)
		y, _ := json.Marshal(in)
		return path, string(x) == string(y)
	}
}
