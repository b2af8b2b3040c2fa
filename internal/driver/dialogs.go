package driver

import (
	"context"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
)

// DialogPolicy says how confirm and prompt dialogs are answered. Alerts are
// always accepted.
type DialogPolicy string

// Dialog policies.
const (
	DialogAccept  DialogPolicy = "accept"
	DialogDismiss DialogPolicy = "dismiss"
)

func (b *Browser) dialog(sid proto.TargetSessionID, e *proto.PageJavascriptDialogOpening) {
	accept := e.Type == proto.PageDialogTypeAlert || e.Type == proto.PageDialogTypeBeforeunload || b.o.DialogPolicy != DialogDismiss
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	err := proto.PageHandleJavaScriptDialog{Accept: accept, PromptText: e.DefaultPrompt}.Call(b.client(ctx, sid))
	if err != nil {
		b.log.Debug().Err(err).Msg("driver: answer dialog")
	}
	answer := "dismissed"
	if accept {
		answer = "accepted"
	}
	b.mu.Lock()
	// Type is alert, confirm, prompt or beforeunload.
	b.ev.dialogs.Add(contract.Dialog{Type: string(e.Type), Message: b.clip(e.Message, 300), Answer: answer})
	b.mu.Unlock()
}
