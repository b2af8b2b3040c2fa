package driver

import "github.com/durable-browser/durable-browser/contract"

// SentSoFar returns the side-effecting requests that have left the browser
// since the last Run returned: while a Run works, what it has sent so far.
// A caller heartbeats it so that a lost worker can still say what was sent.
func (b *Browser) SentSoFar() []contract.SentRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ev.sent.Items()
}
