package test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/workflows"
)

// Session ids that differ only in punctuation get different browsers: what
// one session opens, the other never sees. Shown through the built binary's
// call verb, as a user meets it.
func TestLookAlikeSessionIDsDoNotShareABrowser(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	base := "e2e-lookalike-" + uuid.NewString()[:8]
	a := lookAlike(t, base+":x/1")
	b := lookAlike(t, base+"-x-1")

	call := func(s *session, tool, args string) map[string]any {
		t.Helper()
		out := cliOK(t, "call", s.id, tool, args)
		var res map[string]any
		decodeJSON(t, out, &res)
		return res
	}
	call(a, "run", `{"actions":[{"op":"goto","url":"`+env.Demo.URL()+`/about.html"}]}`)
	snap := call(b, "snapshot", `{}`)
	if snap["url"] != "about:blank" {
		t.Fatalf("session %q sees %v, opened by session %q", b.id, snap["url"], a.id)
	}
	ta, tb := state(t, a.id).Tag, state(t, b.id).Tag
	if ta == "" || ta == tb {
		t.Fatalf("look-alike ids share tag %q", ta)
	}
	if ta != workflows.SessionTag(a.id, 1) || tb != workflows.SessionTag(b.id, 1) {
		t.Fatalf("tags %q and %q, want %q and %q", ta, tb, workflows.SessionTag(a.id, 1), workflows.SessionTag(b.id, 1))
	}
	call(a, "browser_release", `{}`)
	recordHistory(t, a.id, "lookalike-ids")
}

func lookAlike(t *testing.T, id string) *session {
	s := &session{t: t, id: id, cfg: workflows.SessionConfig{SearchAttributes: true}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = env.Client.SignalWorkflow(ctx, s.id, "", contract.SignalClose, nil)
		_ = env.Client.GetWorkflow(ctx, s.id, "").Get(ctx, nil)
	})
	return s
}
