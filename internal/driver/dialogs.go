package driver

import (
	"context"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// DialogPolicy says how confirm and prompt dialogs are answered. Alerts are
// always accepted.
type DialogPolicy string

// Dialog policies.
const (
	DialogAccept  DialogPolicy = "accept"
	DialogDismiss DialogPolicy = "dismiss"
)

// Dialog is a JavaScript dialog the page opened and how it was answered.
type Dialog struct {
	Type     string `json:"type"` // alert, confirm, prompt, beforeunload
	Message  string `json:"message"`
	Accepted bool   `json:"accepted"`
}

func (b *Browser) dialog(sid proto.TargetSessionID, e *proto.PageJavascriptDialogOpening) {
	accept := e.Type == proto.PageDialogTypeAlert || e.Type == proto.PageDialogTypeBeforeunload || b.o.DialogPolicy != DialogDismiss
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	err := proto.PageHandleJavaScriptDialog{Accept: accept, PromptText: e.DefaultPrompt}.Call(b.client(ctx, sid))
	if err != nil {
		b.log.Debug().Err(err).Msg("driver: answer dialog")
	}
	b.mu.Lock()
	if len(b.ev.dialogs) < maxListed {
		b.ev.dialogs = append(b.ev.dialogs, Dialog{Type: string(e.Type), Message: b.clip(e.Message, 300), Accepted: accept})
	}
	b.mu.Unlock()
}
