package contract

import (
	"encoding/json"

	"strings"
	"testing"
)

func TestCallHash(t *testing.T) {
	a := CallHash(ToolRun, json.RawMessage(`{"actions":[{"op":"click","id":"5"}]}`))
	b := CallHash(ToolRun, json.RawMessage(" {\n \"actions\" : [ { \"id\":\"5\", \"op\":\"click\" } ] }\n"))
	if a != b {
		t.Fatal("hash changed with key order or whitespace")
	}
	if len(a) != 64 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("not a hex sha256: %s", a)
	}
	if a == CallHash(ToolRun, json.RawMessage(`{"actions":[{"op":"click","id":"6"}]}`)) {
		t.Fatal("different args, same hash")
	}
	if a == CallHash(ToolSnapshot, json.RawMessage(`{"actions":[{"op":"click","id":"5"}]}`)) {
		t.Fatal("different tool, same hash")
	}
	if CallHash(ToolRelease, nil) != CallHash(ToolRelease, json.RawMessage(" {} ")) {
		t.Fatal("empty args should hash as {}")
	}
	// Array order matters: it is the order actions run in.
	if CallHash(ToolRun, json.RawMessage(`{"actions":[{"op":"back"},{"op":"reload"}]}`)) ==
		CallHash(ToolRun, json.RawMessage(`{"actions":[{"op":"reload"},{"op":"back"}]}`)) {
		t.Fatal("array order ignored")
	}
	// Strings keep <, > and & as written rather than escaped.
	if got := string(CanonicalArgs(json.RawMessage(`{ "b" : "<&>", "a":1 }`))); got != `{"a":1,"b":"<&>"}` {
		t.Fatalf("canonical form %s", got)
	}
	// Not JSON: hashed as given, still stable.
	if CallHash(ToolRun, json.RawMessage("{oops")) != CallHash(ToolRun, json.RawMessage(" {oops\n")) {
		t.Fatal("invalid JSON hash unstable")
	}
}

func FuzzCallHash(f *testing.F) {
	f.Add(ToolRun, []byte(`{"actions":[{"op":"click","id":"5"}]}`))
	f.Add(ToolSnapshot, []byte(` { "b":1, "a":[1, 2.50, "x"] } `))
	f.Add("", []byte(""))
	f.Add(ToolRun, []byte("{\"a\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, name string, raw []byte) {
		h := CallHash(name, raw)
		if len(h) != 64 {
			t.Fatalf("hash %q", h)
		}
		if h != CallHash(name, raw) {
			t.Fatal("unstable")
		}
		// The canonical form is a fixed point: hashing it again gives the same hash.
		if h != CallHash(name, CanonicalArgs(raw)) {
			t.Fatalf("canonical form of %q is not a fixed point", raw)
		}
	})
}
