package contract

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func testKey(t *testing.T, seed byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	return priv.Public().(ed25519.PublicKey), priv
}

func TestDecisionMessagesAreCanonical(t *testing.T) {
	held := time.UnixMilli(1_700_000_000_123)
	exp := time.Unix(1_700_000_300, 0)
	got := string(ApprovalMessage("wf-1", Hold{HoldSubject: HoldSubject{HoldID: "7-1"}, HeldAt: held}, DecisionApprove, "ana", "ok", exp))
	want := "durable-browser decision v1\n8:approval\n4:wf-1\n3:7-1\n13:1700000000123\n7:approve\n3:ana\n2:ok\n10:1700000300\n"
	if got != want {
		t.Fatalf("approval message\n%q\nwant\n%q", got, want)
	}
	// A hold that names its request is signed with it.
	req := Hold{HoldSubject: HoldSubject{HoldID: "h1", Method: "POST", RequestFacts: RequestFacts{URL: "https://a.example/x?q=[redacted]", Digest: "ab12", BodySize: 3, Body: "a=1"}}, HeldAt: held}
	got = string(ApprovalMessage("wf-1", req, DecisionApprove, "ana", "ok", exp))
	want = "durable-browser decision v1\n19:approval of request\n4:wf-1\n2:h1\n13:1700000000123\n4:POST\n32:https://a.example/x?q=[redacted]\n4:ab12\n1:3\n3:a=1\n7:approve\n3:ana\n2:ok\n10:1700000300\n"
	if got != want {
		t.Fatalf("approval message of a request\n%q\nwant\n%q", got, want)
	}
	got = string(HandoffMessage("wf-1", "h-abc", OutcomeDone, "ana", "", exp))
	want = "durable-browser decision v1\n7:handoff\n4:wf-1\n5:h-abc\n0:\n4:done\n3:ana\n0:\n10:1700000300\n"
	if got != want {
		t.Fatalf("handoff message\n%q\nwant\n%q", got, want)
	}
	// Moving bytes between fields changes the message.
	a := ApprovalMessage("wf", Hold{HoldSubject: HoldSubject{HoldID: "1"}, HeldAt: held}, "approve", "ana", "x", exp)
	b := ApprovalMessage("wf", Hold{HoldSubject: HoldSubject{HoldID: "1"}, HeldAt: held}, "approve", "an", "ax", exp)
	if bytes.Equal(a, b) {
		t.Fatal("fields are not delimited")
	}
}

func TestSignedApprovalRoundTrip(t *testing.T) {
	pub, priv := testKey(t, 1)
	otherPub, otherPriv := testKey(t, 2)
	keys := Approvers{{Name: "ana", PublicKey: pub}, {Name: "bob", PublicKey: otherPub}}
	held := time.UnixMilli(1_700_000_000_123)
	now := time.Unix(1_700_000_010, 0)
	hold := Hold{HoldSubject: HoldSubject{HoldID: "h7", Method: "POST", RequestFacts: RequestFacts{URL: "https://shop.example/buy", Digest: "d1", BodySize: 5, Body: "qty=1"}}, HeldAt: held}
	sign := func(mod func(*ApprovalSignal)) ApprovalSignal {
		s := ApprovalSignal{Decision: DecisionApprove, By: "ana", Note: "fine"}
		if err := s.Sign(priv, "wf-1", hold, now.Add(5*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if mod != nil {
			mod(&s)
		}
		return s
	}
	check := func(s ApprovalSignal, wfID string, heldAt time.Time) string {
		h := hold
		h.HoldID, h.HeldAt = s.HoldID, heldAt
		return keys.Verify(s.By, ApprovalMessage(wfID, h, s.Decision, s.By, s.Note, s.ExpiresAt), s.Signature)
	}
	if r := check(sign(nil), "wf-1", held); r != "" {
		t.Fatalf("a good signature: %s", r)
	}
	// A signature over one request never verifies for another.
	good := sign(nil)
	for name, mod := range map[string]func(*Hold){
		"method":     func(h *Hold) { h.Method = "GET" },
		"url":        func(h *Hold) { h.URL = "https://harmless.example/" },
		"digest":     func(h *Hold) { h.Digest = "d2" },
		"body size":  func(h *Hold) { h.BodySize = 6 },
		"body":       func(h *Hold) { h.Body = "qty=9" },
		"no request": func(h *Hold) { h.RequestFacts = RequestFacts{}; h.Method = "" },
	} {
		h := hold
		mod(&h)
		if r := keys.Verify(good.By, ApprovalMessage("wf-1", h, good.Decision, good.By, good.Note, good.ExpiresAt), good.Signature); r != RejectBadSignature {
			t.Errorf("a signature over the request verified for another %s: %q", name, r)
		}
	}
	cases := []struct {
		name   string
		mod    func(*ApprovalSignal)
		wfID   string
		heldAt time.Time
		want   string
	}{
		{"other workflow", nil, "wf-2", held, RejectBadSignature},
		{"other hold time", nil, "wf-1", held.Add(time.Millisecond), RejectBadSignature},
		{"hold id", func(s *ApprovalSignal) { s.HoldID = "h8" }, "wf-1", held, RejectBadSignature},
		{"decision", func(s *ApprovalSignal) { s.Decision = DecisionDeny }, "wf-1", held, RejectBadSignature},
		{"by another approver", func(s *ApprovalSignal) { s.By = "bob" }, "wf-1", held, RejectBadSignature},
		{"by a stranger", func(s *ApprovalSignal) { s.By = "eve" }, "wf-1", held, RejectUnknownSigner},
		{"note", func(s *ApprovalSignal) { s.Note = "fine!" }, "wf-1", held, RejectBadSignature},
		{"expiry", func(s *ApprovalSignal) { s.ExpiresAt = s.ExpiresAt.Add(time.Second) }, "wf-1", held, RejectBadSignature},
		{"unsigned", func(s *ApprovalSignal) { s.Signature = "" }, "wf-1", held, RejectUnsigned},
		{"not base64", func(s *ApprovalSignal) { s.Signature = "!!" }, "wf-1", held, RejectBadSignature},
		{"short", func(s *ApprovalSignal) { s.Signature = base64.StdEncoding.EncodeToString([]byte("abc")) }, "wf-1", held, RejectBadSignature},
		{"wrong key", func(s *ApprovalSignal) {
			_ = s.Sign(otherPriv, "wf-1", hold, s.ExpiresAt) // bob's key, says ana
		}, "wf-1", held, RejectBadSignature},
	}
	for _, c := range cases {
		if got := check(sign(c.mod), c.wfID, c.heldAt); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSignedHandoffRoundTrip(t *testing.T) {
	pub, priv := testKey(t, 1)
	keys := Approvers{{Name: "ana", PublicKey: pub}}
	exp := time.Unix(1_700_000_300, 0)
	s := HandoffSignal{RequestID: "h-1", Outcome: OutcomeDone, By: "ana", Note: "solved"}
	if err := s.Sign(priv, "wf-1", exp); err != nil {
		t.Fatal(err)
	}
	verify := func(s HandoffSignal, wf string) string {
		return keys.Verify(s.By, HandoffMessage(wf, s.RequestID, s.Outcome, s.By, s.Note, s.ExpiresAt), s.Signature)
	}
	if r := verify(s, "wf-1"); r != "" {
		t.Fatalf("good signature: %s", r)
	}
	for name, mod := range map[string]func(*HandoffSignal){
		"request": func(s *HandoffSignal) { s.RequestID = "h-2" },
		"outcome": func(s *HandoffSignal) { s.Outcome = OutcomeCancelled },
		"note":    func(s *HandoffSignal) { s.Note = "" },
		"expiry":  func(s *HandoffSignal) { s.ExpiresAt = s.ExpiresAt.Add(time.Hour) },
	} {
		x := s
		mod(&x)
		if verify(x, "wf-1") != RejectBadSignature {
			t.Errorf("tampered %s verified", name)
		}
	}
	if verify(s, "wf-2") != RejectBadSignature {
		t.Error("another workflow's answer verified")
	}
	// An approval signature never verifies as a handoff answer.
	a := ApprovalSignal{Decision: OutcomeDone, By: "ana", Note: "solved"}
	_ = a.Sign(priv, "wf-1", Hold{HoldSubject: HoldSubject{HoldID: "h-1"}}, exp)
	s.Signature = a.Signature
	if verify(s, "wf-1") != RejectBadSignature {
		t.Error("an approval signature verified as a handoff answer")
	}
}

func TestCheckExpiry(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		exp  time.Time
		want string
	}{
		{time.Time{}, RejectNoExpiry},
		{now, RejectExpired},
		{now.Add(-time.Second), RejectExpired},
		{now.Add(time.Second), ""},
		{now.Add(MaxDecisionValidity), ""},
		{now.Add(MaxDecisionValidity + 2*DecisionClockSkew), RejectExpiryTooFar},
	} {
		if got := CheckExpiry(c.exp, now); got != c.want {
			t.Errorf("expiry %v: %q, want %q", c.exp.Sub(now), got, c.want)
		}
	}
}

func TestParseApprovers(t *testing.T) {
	pub, _ := testKey(t, 1)
	line := Approver{Name: "ana", PublicKey: pub}.Line()
	keys, err := ParseApprovers(strings.NewReader("# approvers\n\n" + line + "\n"))
	if err != nil || len(keys) != 1 || keys[0].Name != "ana" || !bytes.Equal(keys[0].PublicKey, pub) {
		t.Fatalf("%v %+v", err, keys)
	}
	if _, ok := keys.Key("ana"); !ok {
		t.Fatal("no key for ana")
	}
	for _, bad := range []string{
		"ana",
		"ana x y",
		"an a " + base64.StdEncoding.EncodeToString(pub),
		"ana " + base64.StdEncoding.EncodeToString(pub[:31]),
		"a/b " + base64.StdEncoding.EncodeToString(pub),
		line + "\n" + line,
	} {
		if _, err := ParseApprovers(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	// A key of the wrong size never verifies (and never panics).
	short := Approvers{{Name: "x", PublicKey: []byte{1, 2}}}
	if short.Verify("x", []byte("m"), base64.StdEncoding.EncodeToString(make([]byte, 64))) != RejectUnknownSigner {
		t.Fatal("a malformed key was used")
	}
}
