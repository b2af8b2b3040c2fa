package driver

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"

	"github.com/durable-browser/durable-browser/contract"
)

// RuleSecret is the BlockedRequest rule of a request that carried a typed
// secret toward an origin the secret is not bound to.
const RuleSecret = "secret"

// frameOrigin is the security origin of the frame the element r was found
// in, as the browser reports it (Page.getFrameTree), not as the page's
// script could present it. "" when the frame is gone or its origin is
// opaque (a sandboxed frame, a data: document).
func (b *Browser) frameOrigin(ctx context.Context, r ref) (string, error) {
	if r.frame == nil {
		return "", fmt.Errorf("the element's frame is unknown")
	}
	tree, err := proto.PageGetFrameTree{}.Call(b.client(ctx, r.frame.sess))
	if err != nil {
		return "", err
	}
	var find func(ft *proto.PageFrameTree) *proto.PageFrame
	find = func(ft *proto.PageFrameTree) *proto.PageFrame {
		if ft == nil || ft.Frame == nil {
			return nil
		}
		if ft.Frame.ID == r.frame.frameID {
			return ft.Frame
		}
		for _, c := range ft.ChildFrames {
			if f := find(c); f != nil {
				return f
			}
		}
		return nil
	}
	f := find(tree.FrameTree)
	if f == nil {
		return "", fmt.Errorf("the element's frame is gone")
	}
	return redact.OriginOf(f.SecurityOrigin), nil
}

// checkSecretTarget refuses to type secrets into the element r unless its
// frame's origin is bound to every one of them. The message names the
// frame's origin and the secret, never the value.
func (b *Browser) checkSecretTarget(ctx context.Context, r ref, secrets []redact.Secret) error {
	origin, err := b.frameOrigin(ctx, r)
	if err != nil {
		return &ActionError{Kind: KindNotVisible, Reason: "the field's frame is gone; take a new snapshot", Err: err}
	}
	for _, s := range secrets {
		if origin != "" && s.Bound(origin) {
			continue
		}
		where := origin
		if where == "" {
			where = "a frame with an opaque origin (sandboxed or data:)"
		}
		return &ActionError{Kind: KindRefused, Reason: fmt.Sprintf("secret %s is not typed into %s: it belongs to %s (set %s%s%s to add an origin)",
			s.Name, where, strings.Join(s.Origins, ", "), redact.EnvPrefix, s.Name, redact.OriginsSuffix)}
	}
	return nil
}

// armSecrets starts guarding the session's requests against secrets, from
// before the first key of one is typed until the session ends.
func (b *Browser) armSecrets(secrets []redact.Secret) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = b.armed.With(secrets...)
	if b.o.Egress != nil {
		// WebSockets and whatever else the Fetch domain does not see.
		b.o.Egress.Arm(b.armed)
	}
}

// ranPageCode reports whether Eval ran code in this session's pages.
func (b *Browser) ranPageCode() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pageCode
}

// TypedSecrets names the secrets typed in this session (never values).
func (b *Browser) TypedSecrets() []string {
	b.mu.Lock()
	m := b.armed
	b.mu.Unlock()
	return m.Names()
}

// secretIn reports the name of a typed secret the paused request carries
// (URL, headers or body) toward an origin it is not bound to, and why,
// reading the body where the pause omitted it. A body that cannot be read
// counts as carrying one: with a secret typed, what cannot be checked is
// not sent toward an origin the secret does not belong to.
func (b *Browser) secretIn(ctx context.Context, sid proto.TargetSessionID, e *proto.FetchRequestPaused) (name, why string, found bool) {
	b.mu.Lock()
	m := b.armed
	b.mu.Unlock()
	if m.Len() == 0 {
		return "", "", false
	}
	origin := redact.OriginOf(e.Request.URL)
	first, ok := m.Unbound(origin)
	if !ok {
		return "", "", false // every typed secret belongs there
	}
	parts := make([]string, 0, 4+len(e.Request.Headers))
	parts = append(parts, e.Request.URL, e.Request.URLFragment)
	for k, v := range e.Request.Headers {
		parts = append(parts, k+": "+v.Str())
	}
	body := e.Request.PostData
	if body == "" && len(e.Request.PostDataEntries) > 0 {
		var sb strings.Builder
		for _, pe := range e.Request.PostDataEntries {
			sb.Write(pe.Bytes)
		}
		body = sb.String()
	}
	if e.Request.HasPostData && body == "" && e.NetworkID != "" {
		if res, err := (proto.NetworkGetRequestPostData{RequestID: e.NetworkID}).Call(b.client(ctx, sid)); err == nil {
			body = res.PostData
		}
	}
	if e.Request.HasPostData && body == "" {
		return first, "its body could not be read to check it for the secret", true
	}
	parts = append(parts, body)
	if n, ok := m.Find(origin, parts...); ok {
		return n, "it carries the secret", true
	}
	return "", "", false
}

// hostSecret reports a request whose host name carries a typed secret not
// bound to the request's origin, before anything looks the name up: a
// lookup carries the name to the name servers of its domain. The
// blocked request's origin shows the host with those labels redacted.
func (b *Browser) hostSecret(rawURL string) (blocked, bool) {
	b.mu.Lock()
	m := b.armed
	b.mu.Unlock()
	if m.Len() == 0 {
		return blocked{}, false
	}
	// As the reach guard reads it, a URL Go cannot parse included.
	t, ok := netguard.ParseTarget(rawURL)
	if !ok || t.Host.Name == "" {
		return blocked{}, false
	}
	origin := redact.OriginOf(rawURL)
	name, hit := m.FindHost(t.Host.Name, origin)
	if !hit {
		return blocked{}, false
	}
	shown := t.Scheme + "://" + m.ShownHost(t.Host.Name, origin) + ":" + t.Port
	return blocked{BlockedRequest: contract.BlockedRequest{Rule: RuleSecret, Secret: name, Origin: shown},
		message: fmt.Sprintf("%s: the host name carries secret %s, which does not belong to it; the name was not looked up", shown, name)}, true
}
