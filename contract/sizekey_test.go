package contract

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsonNames are the top-level member names encoding/json writes for t: its
// fields', and those of structs it embeds untagged, as encoding/json
// promotes them.
func jsonNames(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			names = append(names, jsonNames(ft)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// topLevelKeys counts the members of a JSON object by name.
func topLevelKeys(t *testing.T, raw []byte) map[string]int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	keys := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		keys[strings.ToLower(tok.(string))]++
	}
	return keys
}

// Every answer ends with its own "size" (WithSize, EncodeAnswer), so no
// result type may have a member of that name: an upload's answer once
// carried two ("size":10, then "size":{"chars":...}), and ForModel, which
// drops the answer's size, dropped the file's with it.
func TestNoResultHasAMemberNamedSize(t *testing.T) {
	types := []any{new(Failure)}
	for _, s := range Specs() {
		if s.NewResult != nil {
			types = append(types, s.NewResult())
		}
	}
	for _, v := range types {
		typ := reflect.TypeOf(v).Elem()
		for _, name := range jsonNames(typ) {
			if strings.EqualFold(name, "size") {
				t.Errorf("%s has a member named %q, which every answer's own size collides with", typ, name)
			}
		}
		raw, _, err := EncodeAnswer(v)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if n := topLevelKeys(t, raw)["size"]; n != 1 {
			t.Errorf("%s's answer has %d members named size: %s", typ, n, raw)
		}
	}
}

// An upload's answer says the file's size as bytes, once, beside the
// answer's own size; what a model reads keeps it; results recorded when it
// was "size" (an activity's result in a history, an answer of then with
// its two sizes) still decode to it.
func TestUploadResultBytes(t *testing.T) {
	res := UploadResult{OK: true, Page: Page{URL: "https://example.com/form", Title: "Form"}, Name: "f.txt", Bytes: 10}
	raw, _, err := EncodeAnswer(res)
	if err != nil {
		t.Fatal(err)
	}
	if keys := topLevelKeys(t, raw); keys["size"] != 1 || keys["bytes"] != 1 || !strings.Contains(string(raw), `"bytes":10`) {
		t.Fatalf("answer %s", raw)
	}
	if model := ForModel(ToolCall{Name: ToolUpload}, raw); !strings.Contains(model, `"name":"f.txt","bytes":10`) {
		t.Fatalf("a model reads %s; want the file's bytes", model)
	}
	for _, old := range []string{
		string(raw),
		`{"ok":true,"url":"https://example.com/form","title":"Form","name":"f.txt","size":10}`,
		`{"ok":true,"url":"https://example.com/form","title":"Form","name":"f.txt","size":10,"size":{"chars":92,"tokens":23}}`,
	} {
		var got UploadResult
		if err := json.Unmarshal([]byte(old), &got); err != nil || got != res {
			t.Errorf("%s decodes to %+v (%v), want %+v", old, got, err, res)
		}
	}
}
