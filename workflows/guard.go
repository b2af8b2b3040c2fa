package workflows

import (
	"fmt"

	"github.com/durable-browser/durable-browser/contract"
)

// maxGuardEntries bounds the guard state carried in history and across
// continue-as-new; the oldest entries go first.
const maxGuardEntries = 64

// GuardState is what the identical-call guards remember. It is plain data in
// slices (never maps), so its order in history and results is deterministic.
type GuardState struct {
	// Unknown lists calls that came back effect_unknown and are refused once
	// (run) or until the agent has looked again (upload).
	Unknown []UnknownCall `json:"unknown,omitempty"`
	// Repeats counts consecutive failures of the same code per call.
	Repeats []RepeatCount `json:"repeats,omitempty"`
}

// UnknownCall is a call that may have taken effect.
type UnknownCall struct {
	Hash string `json:"hash"`
	Tool string `json:"tool"`
	// UntilLook keeps refusing until a snapshot succeeds (browser_upload);
	// otherwise the call is refused once.
	UntilLook bool `json:"until_look,omitempty"`
}

// RepeatCount is how many times in a row an identical call failed with Code.
type RepeatCount struct {
	Hash  string        `json:"hash"`
	Code  contract.Code `json:"code"`
	Count int           `json:"count"`
}

// repeatLimit is how many identical failures with one code are let through.
const repeatLimit = 2

// check refuses a call the guards hold back, or returns nil.
func (g *GuardState) check(tool, hash string) *contract.Failure {
	for i, u := range g.Unknown {
		if u.Hash != hash {
			continue
		}
		if u.UntilLook {
			return contract.Fail(contract.CodeEffectUnknown,
				"an identical %s may already have happened when its worker was lost; take a snapshot to look at the page first, then call again if it is still needed", tool).Effected()
		}
		g.Unknown = append(g.Unknown[:i:i], g.Unknown[i+1:]...)
		return contract.Fail(contract.CodeEffectUnknown,
			"an identical %s may already have happened when its worker was lost; take a snapshot to check before repeating it. Sending it again will run it", tool).Effected()
	}
	for _, r := range g.Repeats {
		if r.Hash == hash && r.Count >= repeatLimit {
			return contract.Fail(contract.CodeRefused,
				"this identical %s has already failed %d times with %s; change the call instead of repeating it (a run that succeeds clears this)", tool, r.Count, r.Code)
		}
	}
	return nil
}

// record notes how a call that ran came out.
func (g *GuardState) record(tool, hash string, f *contract.Failure) {
	if f == nil {
		g.forget(hash)
		switch tool {
		case contract.ToolSnapshot:
			// The agent has looked: uploads may be tried again.
			kept := g.Unknown[:0:0]
			for _, u := range g.Unknown {
				if !u.UntilLook {
					kept = append(kept, u)
				}
			}
			g.Unknown = kept
		case contract.ToolRun:
			// The page changed; earlier failures of other calls say little now.
			g.Repeats = nil
		}
		return
	}
	if f.Code == contract.CodeEffectUnknown {
		g.Unknown = appendBounded(g.Unknown, UnknownCall{Hash: hash, Tool: tool, UntilLook: tool == contract.ToolUpload})
		return
	}
	if f.Code == contract.CodeWaitingForHuman || f.Reason == contract.ReasonPersonDriving {
		// Someone else has the browser: the call was fine and is to be
		// repeated once they are done. (No history before the live view
		// holds this reason, so no replay decides differently.)
		return
	}
	for i := range g.Repeats {
		if g.Repeats[i].Hash == hash {
			if g.Repeats[i].Code == f.Code {
				g.Repeats[i].Count++
			} else {
				g.Repeats[i].Code, g.Repeats[i].Count = f.Code, 1
			}
			return
		}
	}
	g.Repeats = appendBounded(g.Repeats, RepeatCount{Hash: hash, Code: f.Code, Count: 1})
}

func (g *GuardState) forget(hash string) {
	kept := g.Repeats[:0:0]
	for _, r := range g.Repeats {
		if r.Hash != hash {
			kept = append(kept, r)
		}
	}
	g.Repeats = kept
}

func appendBounded[T any](s []T, v T) []T {
	s = append(s, v)
	if len(s) > maxGuardEntries {
		s = append(s[:0:0], s[len(s)-maxGuardEntries:]...)
	}
	return s
}

// String summarises the guards for logs.
func (g GuardState) String() string {
	return fmt.Sprintf("unknown=%d repeats=%d", len(g.Unknown), len(g.Repeats))
}
