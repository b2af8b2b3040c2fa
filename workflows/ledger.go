package workflows

import (
	"encoding/json"

	"github.com/durable-browser/durable-browser/contract"
)

// ledger remembers the answers of a session's recent effect calls by update
// id. Temporal deduplicates an update id only within one run, and a session
// continues as new right after calls whose answers a caller may have lost;
// the ledger rides in Carried and in SessionResult so a resend is answered
// from it. Reads are not kept: running a read again is harmless.
type ledger []contract.Answered

// find returns the recorded answer for id, a conflict refusal when the id
// was used for another call, or false when the id is new.
func (l ledger) find(id, tool string, raw json.RawMessage) (json.RawMessage, bool) {
	if id == "" {
		return nil, false
	}
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].UpdateID != id {
			continue
		}
		if l[i].Tool != tool || l[i].Hash != contract.CallHash(tool, raw) {
			f := contract.Fail(contract.CodeRefused, "update id %q was already used for another call (%s); send a new call with a new update id", clip(id, 80), l[i].Tool)
			b, _ := json.Marshal(f)
			return b, true
		}
		return l[i].Answer, true
	}
	return nil, false
}

// add records an answered effect call, keeping the last MaxAnswered.
func (l ledger) add(id, tool string, raw json.RawMessage, answer json.RawMessage) ledger {
	if id == "" {
		return l
	}
	if t, ok := contract.Lookup(tool); !ok || t.Class == contract.ClassRead {
		return l
	}
	if len(answer) > contract.MaxAnsweredBytes {
		f := contract.Fail(contract.CodeRefused, "this call (update id %q) already ran; its answer was too large to keep for a resend. Take a snapshot to see where it left the page", clip(id, 80)).Effected()
		answer, _ = json.Marshal(f)
	}
	l = append(l, contract.Answered{UpdateID: id, Tool: tool, Hash: contract.CallHash(tool, raw), Answer: answer})
	if over := len(l) - contract.MaxAnswered; over > 0 {
		l = append(ledger(nil), l[over:]...)
	}
	return l
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
