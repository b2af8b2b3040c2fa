package driver

import (
	"net/url"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
)

// GateDecision is a RequestGate's answer.
type GateDecision int

// Gate decisions.
const (
	GateAllow GateDecision = iota + 1
	GateDeny
)

// DecisionDenied is the decision a Run's Held gives a request the
// RequestGate refused.
const DecisionDenied = "denied"

// GatedRequest is a side-effecting request waiting for the RequestGate.
// URL and Body are the request as the page sends it (query and body may
// hold secrets): the gate digests them to bind an approval to this exact
// request, and must never show, log or file them unredacted.
type GatedRequest struct {
	Method       string
	Origin       string
	Path         string
	URL          string
	Body         []byte
	ResourceType string
	TabID        string
}

// postBody is the request's body as Chrome hands it over (entries joined).
func postBody(r *proto.NetworkRequest) []byte {
	var b []byte
	for _, e := range r.PostDataEntries {
		if e != nil {
			b = append(b, e.Bytes...)
		}
	}
	if len(b) == 0 && r.PostData != "" {
		b = []byte(r.PostData)
	}
	return b
}

type reqInfo struct{ method, url string }

// refusal is a request the RequestGate denied. doc says it was a document's
// request (Chrome's resource type Document): a navigation of a tab or of a
// frame in it, such as a form's submission, which is what an action that
// makes it is for. Other requests (fetch, XHR, a beacon) are a page's
// scripts' own, whatever set them off. tab is the tab it came from (nil
// when not known).
type refusal struct {
	contract.SentRequest
	doc bool
	tab *tab
}

func safeMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// gate holds a side-effecting request until the RequestGate decides.
func (b *Browser) gate(sid proto.TargetSessionID, e *proto.FetchRequestPaused) {
	c := b.client(b.ctx, sid)
	if safeMethod(e.Request.Method) || e.ResponseStatusCode != nil {
		_ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(c)
		return
	}
	o, p := b.originPath(e.Request.URL)
	sr := contract.SentRequest{Method: e.Request.Method, Origin: o, Path: p}
	b.mu.Lock()
	ctx := b.runCtx
	if ctx == nil {
		ctx = b.holdCtx
	}
	if ctx == nil {
		ctx = b.ctx
	}
	t := b.sessions[sid]
	short := ""
	if t != nil {
		short = t.short
	}
	b.mu.Unlock()
	doc := e.ResourceType == proto.NetworkResourceTypeDocument
	dec := GateDeny
	func() {
		defer func() {
			if r := recover(); r != nil {
				b.log.Error().Interface("panic", r).Msg("driver: request gate panicked; request denied")
			}
		}()
		dec = b.o.RequestGate(ctx, GatedRequest{Method: sr.Method, Origin: o, Path: p, URL: e.Request.URL, Body: postBody(e.Request), ResourceType: string(e.ResourceType), TabID: short})
	}()
	if ctx.Err() != nil {
		dec = GateDeny
	}
	var err error
	if dec == GateAllow {
		err = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(c)
	} else {
		err = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}.Call(c)
	}
	if err != nil {
		b.log.Debug().Err(err).Msg("driver: release gated request")
	}
	b.mu.Lock()
	b.gating--
	if dec == GateAllow {
		b.ev.sent.Add(sr)
	} else {
		b.deniedLocked(refusal{SentRequest: sr, doc: doc, tab: t})
	}
	b.mu.Unlock()
}

// originPath splits a URL into origin and path, dropping userinfo, query and
// fragment, which may carry secrets. The path is redacted, then bounded.
func (b *Browser) originPath(raw string) (string, string) {
	o, p := splitOriginPath(raw)
	return o, b.clip(p, 200)
}

func splitOriginPath(raw string) (string, string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i]
		}
		return "", raw
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return u.Scheme + "://" + u.Host, p
}

// redactWS hides the token part of a debugger URL in error messages.
func redactWS(raw string) string {
	o, _ := splitOriginPath(raw)
	if o == "" {
		return "the CDP URL"
	}
	return o
}
