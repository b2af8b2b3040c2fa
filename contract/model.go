package contract

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
)

// ForModel renders a tool's answer the way a model reads it best: the same
// JSON object, field for field, less the fields that tell the model
// nothing it does not already know. Feed a model ForModel's text and keep
// the answer itself for code (the contract types decode the answer, not
// this). The MCP server sends this text; docs/tools.md lists the rules:
//
//   - size, and ok when true (a tool error says failure): they are for the
//     orchestrator's budget and code;
//   - a run's completed and total when every action ran;
//   - elements and interactive, unless the text was cut;
//   - a run's title when its observation lists changes on the page the run
//     started on and changes.title does not say the actions changed it;
//   - a run's url when its changes are on the page the model last looked at
//     (changes.same_page, which goes too), or when it is the URL the run's
//     last goto asked for (a redirect keeps it);
//   - changes of a run's observation that only say the page navigated (the
//     title, and the url unless the model asked for it, say where to);
//   - a sent or held request's origin when it is the page's.
//
// And the answer's page text, when it is fenced (a snapshot's text, a run's
// observed text, what browser_read and web_fetch read), leaves the JSON: it
// follows the object, from its fence's first line to the end of the
// answer, as the page wrote it, so a model reads its quotes and line breaks
// without JSON's escapes. Nothing follows it, so its fence's last line goes:
// the end of the answer ends it, which no page can write (docs/security.md).
//
// Anything else, and an answer that is not a JSON object, passes unchanged.
// ForModel never fails: what it cannot read it leaves as it was.
func ForModel(call ToolCall, answer json.RawMessage) string {
	obj, ok := parseObject(answer)
	if !ok {
		return string(answer)
	}
	obj.drop("size")
	if string(obj.get("ok")) != "true" {
		return string(obj.encode())
	}
	obj.drop("ok")
	pageURL := unquote(obj.get("url"))
	d, ok := specFor(call.Name)
	if ok && d.model != nil {
		d.model(obj, call.Args, pageURL)
	}
	text := ""
	if ok && d.pageText != "" {
		text = movePageText(obj, d.pageText)
	}
	return string(obj.encode()) + text
}

// movePageText leaves out of obj the member at path ("text", or
// "observed.text") when it is a fenced text, and returns it to follow the
// object: a line break, the fence's first line and the text, without the
// fence's last line; "" when it stays.
func movePageText(obj *object, path string) string {
	key, rest, nested := strings.Cut(path, ".")
	if nested {
		inner, ok := parseObject(obj.get(key))
		if !ok {
			return ""
		}
		text := movePageText(inner, rest)
		if text != "" {
			obj.set(key, inner.encode())
		}
		return text
	}
	text := unquote(obj.get(key))
	if !isFenced(text) {
		return ""
	}
	obj.drop(key)
	return "\n" + text[:strings.LastIndexByte(text, '\n')]
}

// isFenced says whether text is one fenced block: a first line
// FenceOpen(code), a last line FenceClose(code) with the same code, and
// that closing line nowhere else.
func isFenced(text string) bool {
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(first, fenceOpenPrefix) || !strings.HasSuffix(first, fenceSuffix) {
		return false
	}
	code := strings.TrimSuffix(strings.TrimPrefix(first, fenceOpenPrefix), fenceSuffix)
	if strings.TrimSpace(code) == "" || strings.ContainsAny(code, "\r\n") {
		return false
	}
	end := FenceClose(code)
	return strings.HasSuffix(rest, end) && strings.Count(rest, end) == 1 &&
		(rest == end || strings.HasSuffix(rest, "\n"+end))
}

func modelRun(obj *object, args json.RawMessage, pageURL string) {
	if obj.get("failed") == nil && bytes.Equal(obj.get("completed"), obj.get("total")) {
		obj.drop("completed")
		obj.drop("total")
	}
	if obs, ok := parseObject(obj.get("observed")); ok {
		dropCounts(obs)
		ch, _ := parseObject(obs.get("changes"))
		switch {
		case ch == nil:
		case string(ch.get("full")) != "true":
			// Changes on the document the run started on, whose title
			// the actions left as it was; on the page the model last
			// looked at (same_page), whose url it knows.
			if string(ch.get("title")) != "true" {
				obj.drop("title")
			}
			if string(ch.get("same_page")) == "true" {
				obj.drop("url")
			}
			ch.drop("same_page") // said by the missing url
			obs.set("changes", ch.encode())
		case unquote(ch.get("reason")) == ReasonNavigated:
			obs.drop("changes") // the url or title in this answer says where to
		}
		obj.set("observed", obs.encode())
	}
	if pageURL != "" && pageURL == lastGoto(args) {
		obj.drop("url")
	}
	origin := originOf(pageURL)
	for _, key := range []string{"sent", "held"} {
		obj.mapList(key, func(req *object) {
			if origin != "" && unquote(req.get("origin")) == origin {
				req.drop("origin")
			}
		})
	}
}

// ReasonNavigated is the reason a run's observation shows a whole page
// after the actions went to another.
const ReasonNavigated = "the page navigated"

// dropCounts leaves out a snapshot's element counts unless its text was
// cut, where they say how much more there is.
func dropCounts(obj *object) {
	if obj.get("truncated") == nil && obj.get("next_offset") == nil {
		obj.drop("elements")
		obj.drop("interactive")
	}
}

// lastGoto is the URL of a run's last goto action, or "".
func lastGoto(args json.RawMessage) string {
	var in struct {
		Actions []struct {
			Op  string `json:"op"`
			URL string `json:"url"`
		} `json:"actions"`
	}
	if json.Unmarshal(args, &in) != nil {
		return ""
	}
	for i := len(in.Actions) - 1; i >= 0; i-- {
		if in.Actions[i].Op == "goto" {
			return in.Actions[i].URL
		}
	}
	return ""
}

func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func unquote(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// object is a JSON object's members in their order, values kept as they
// were written, so a rendering changes only what it drops.
type object struct{ members []member }

type member struct {
	key string
	val json.RawMessage
}

func parseObject(raw json.RawMessage) (*object, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	o := &object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		o.members = append(o.members, member{key, val})
	}
	if _, err := dec.Token(); err != nil || dec.More() {
		return nil, false
	}
	if _, err := dec.Token(); err == nil { // something after the object
		return nil, false
	}
	return o, true
}

// get is a member's value, or nil. With a key written twice, the last
// wins, as encoding/json decodes it.
func (o *object) get(key string) json.RawMessage {
	var v json.RawMessage
	for _, m := range o.members {
		if m.key == key {
			v = m.val
		}
	}
	return v
}

func (o *object) drop(key string) {
	kept := o.members[:0]
	for _, m := range o.members {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	o.members = kept
}

func (o *object) set(key string, val json.RawMessage) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members[i].val = val
		}
	}
}

// mapList applies f to each object of the list under key.
func (o *object) mapList(key string, f func(*object)) {
	var list []json.RawMessage
	if json.Unmarshal(o.get(key), &list) != nil || len(list) == 0 {
		return
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, item := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		if obj, ok := parseObject(item); ok {
			f(obj)
			item = obj.encode()
		}
		b.Write(item)
	}
	b.WriteByte(']')
	o.set(key, json.RawMessage(b.String()))
}

func (o *object) encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key) // our field names: nothing to escape
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}
