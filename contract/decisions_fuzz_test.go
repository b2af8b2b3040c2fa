package contract

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// Two different approvals never share a signed message: a signature over
// one hold, request or decision cannot be taken for another.
func FuzzApprovalMessage(f *testing.F) {
	f.Add("wf", "h1", "POST", "https://a.example/x", "d1", 3, "a=1", "approve", "ana", "ok", "wf", "h1", "POST", "https://a.example/x", "d1", 3, "a=1", "approve", "an", "aok")
	f.Add("wf", "h1", "", "", "", 0, "", "approve", "ana", "", "wf", "h1", "GET", "https://harmless.example/", "x", 0, "", "approve", "ana", "")
	f.Fuzz(func(t *testing.T, wf1, id1, m1, u1, d1 string, n1 int, b1, dec1, by1, note1, wf2, id2, m2, u2, d2 string, n2 int, b2, dec2, by2, note2 string) {
		at := time.UnixMilli(1_700_000_000_000)
		exp := at.Add(time.Minute)
		h1 := Hold{HoldSubject: HoldSubject{HoldID: id1, Method: m1, RequestFacts: RequestFacts{URL: u1, Digest: d1, BodySize: n1, Body: b1}}, HeldAt: at}
		h2 := Hold{HoldSubject: HoldSubject{HoldID: id2, Method: m2, RequestFacts: RequestFacts{URL: u2, Digest: d2, BodySize: n2, Body: b2}}, HeldAt: at}
		a := ApprovalMessage(wf1, h1, dec1, by1, note1, exp)
		b := ApprovalMessage(wf2, h2, dec2, by2, note2, exp)
		// What the message covers: the request only when the hold names one.
		norm := func(h Hold) Hold {
			if h.Digest == "" {
				h.Method, h.RequestFacts = "", RequestFacts{}
			}
			return h
		}
		same := wf1 == wf2 && norm(h1) == norm(h2) && dec1 == dec2 && by1 == by2 && note1 == note2
		if same != bytes.Equal(a, b) {
			t.Fatalf("messages equal = %v for approvals equal = %v:\n%q\n%q", bytes.Equal(a, b), same, a, b)
		}
		if !bytes.HasPrefix(a, []byte(SignatureDomain+"\n")) {
			t.Fatalf("message without the domain: %q", a)
		}
	})
}

// Verify answers "" only for a signature the named approver's key made over
// exactly this message; anything else is a rejection reason, never a panic.
func FuzzVerifyDecision(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	keys := Approvers{{Name: "ana", PublicKey: priv.Public().(ed25519.PublicKey)}, {Name: "nokey"}}
	good := base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte("msg")))
	f.Add("ana", []byte("msg"), good)
	f.Add("ana", []byte("msg2"), good)
	f.Add("eve", []byte("msg"), good)
	f.Add("nokey", []byte("msg"), good)
	f.Add("ana", []byte("msg"), "")
	f.Add("ana", []byte("msg"), "!!")
	f.Fuzz(func(t *testing.T, by string, msg []byte, sig string) {
		r := keys.Verify(by, msg, sig)
		valid := by == "ana" && bytes.Equal(msg, []byte("msg")) && sig == good
		switch {
		case valid && r != "":
			t.Fatalf("the good signature was rejected: %s", r)
		case !valid && r == "":
			// Only another valid encoding of a valid signature could pass.
			raw, err := base64.StdEncoding.DecodeString(sig)
			if err != nil || by != "ana" || !ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, raw) {
				t.Fatalf("verified %q over %q by %q", sig, msg, by)
			}
		}
		if r != "" && r != RejectUnsigned && r != RejectUnknownSigner && r != RejectBadSignature {
			t.Fatalf("reason %q", r)
		}
	})
}

// A keys file parses to approvers with valid names, 32-byte keys and no
// name twice, or to an error; each approver's line parses back to itself.
func FuzzParseApprovers(f *testing.F) {
	pub := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	line := Approver{Name: "ana", PublicKey: pub}.Line()
	f.Add(line + "\n")
	f.Add("# comment\n\n" + line + "\n" + line + "\n")
	f.Add("ana notbase64\n")
	f.Add("a b c\n")
	f.Fuzz(func(t *testing.T, file string) {
		got, err := ParseApprovers(strings.NewReader(file))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, a := range got {
			if !ValidApproverName(a.Name) || len(a.PublicKey) != ed25519.PublicKeySize || seen[a.Name] {
				t.Fatalf("parsed %+v from %q", a, file)
			}
			seen[a.Name] = true
			again, err := ParseApprovers(strings.NewReader(a.Line()))
			if err != nil || len(again) != 1 || again[0].Name != a.Name || !bytes.Equal(again[0].PublicKey, a.PublicKey) {
				t.Fatalf("%q parsed back to %+v, %v", a.Line(), again, err)
			}
		}
	})
}

// An expiry is accepted exactly when it lies after now and at most
// MaxDecisionValidity (plus the skew allowance) ahead.
func FuzzCheckExpiry(f *testing.F) {
	f.Add(int64(1_700_000_300), int64(1_700_000_000))
	f.Add(int64(0), int64(1_700_000_000))
	f.Add(int64(1_700_000_000), int64(1_700_000_000))
	f.Add(int64(1_700_003_661), int64(1_700_000_000))
	f.Fuzz(func(t *testing.T, exp, now int64) {
		e, n := time.Unix(exp, 0), time.Unix(now, 0)
		if exp == 0 {
			e = time.Time{}
		}
		r := CheckExpiry(e, n)
		ok := !e.IsZero() && n.Before(e) && e.Sub(n) <= MaxDecisionValidity+DecisionClockSkew
		if ok != (r == "") {
			t.Fatalf("CheckExpiry(%v, %v) = %q", e, n, r)
		}
	})
}

// CallerUpdateID undoes UpdateIDFor for every id and call, and leaves an id
// not made by it as it is unless it ends like one.
func FuzzCallerUpdateID(f *testing.F) {
	f.Add("turn-7", "snapshot", `{}`)
	f.Add("a~call-0123456789abcdef", "run", `{"actions":[]}`)
	f.Add("", "snapshot", `{}`)
	f.Fuzz(func(t *testing.T, id, name, args string) {
		full := UpdateIDFor(id, ToolCall{Name: name, Args: []byte(args)})
		if id == "" {
			if full != "" {
				t.Fatalf("empty id made %q", full)
			}
			return
		}
		if got := CallerUpdateID(full); got != id {
			t.Fatalf("CallerUpdateID(UpdateIDFor(%q)) = %q", id, got)
		}
		if got := CallerUpdateID(id); got != id && !strings.Contains(id, updateIDMark) {
			t.Fatalf("CallerUpdateID(%q) = %q for an id without the mark", id, got)
		}
	})
}
