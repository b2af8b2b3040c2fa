package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUpdateIDFor(t *testing.T) {
	a := ToolCall{Name: "run", Args: json.RawMessage(`{"actions":[{"op":"goto","url":"http://a/"}]}`)}
	same := ToolCall{Name: "run", Args: json.RawMessage(`{ "actions": [ {"url":"http://a/", "op":"goto"} ] }`)}
	other := ToolCall{Name: "run", Args: json.RawMessage(`{"actions":[{"op":"goto","url":"http://b/"}]}`)}
	if UpdateIDFor("", a) != "" {
		t.Fatal("no caller id must stay empty, for Temporal to pick one")
	}
	if UpdateIDFor("turn-1", a) != UpdateIDFor("turn-1", same) {
		t.Fatal("the same call spelled otherwise must keep its update id")
	}
	if UpdateIDFor("turn-1", a) == UpdateIDFor("turn-1", other) {
		t.Fatal("another call under the id must reach the session as another update")
	}
	for _, id := range []string{"turn-1", "a~call-b", "x~call-0123456789abcdef"} {
		if got := CallerUpdateID(UpdateIDFor(id, a)); got != id {
			t.Errorf("CallerUpdateID(UpdateIDFor(%q)) = %q", id, got)
		}
	}
	if got := CallerUpdateID("plain-id"); got != "plain-id" {
		t.Errorf("an id sent directly came back as %q", got)
	}
}

func TestOptionsDiffer(t *testing.T) {
	have := SessionOptions{ActionPolicy: PolicyAllow, AllowHosts: []string{"Shop.example."}}
	want := SessionOptions{ActionPolicy: PolicyAsk, Stealth: true, AllowHosts: []string{"shop.example"}}
	got := OptionsDiffer(want, have, []string{OptionActionPolicy, OptionAllowHosts}, "session")
	if len(got) != 1 || !strings.Contains(got[0], "action_policy (asked ask, the session has allow)") {
		t.Fatalf("only the named fields, compared in one spelling: %v", got)
	}
	if all := OptionsDiffer(want, have, nil, "browser"); len(all) != 2 {
		t.Fatalf("nil fields compare every option: %v", all)
	}
	// A named state makes no browser: a found browser is never compared on
	// it, but a caller naming it is refused by a session keeping another.
	want.State, have.State = "shop", "mail"
	if all := OptionsDiffer(want, have, nil, "browser"); len(all) != 2 {
		t.Fatalf("nil fields leave the state out: %v", all)
	}
	got = OptionsDiffer(want, have, []string{OptionState}, "session")
	if len(got) != 1 || got[0] != "state (asked shop, the session has mail)" {
		t.Fatalf("a named state compared when asked: %v", got)
	}
	have.State = ""
	if got = OptionsDiffer(want, have, []string{OptionState}, "session"); len(got) != 1 || !strings.Contains(got[0], "has none") {
		t.Fatalf("a session keeping no state refuses a call naming one: %v", got)
	}
}
