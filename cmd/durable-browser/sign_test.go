package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

// keygen writes a private key only its owner reads and prints the public
// line a worker's --approver-keys takes; a decision signed with the key
// verifies against that line.
func TestKeygenSignsWhatTheWorkerVerifies(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "ana.key")
	out, errOut, code := opsCLI(t, "approvals", "keygen", "--name", "ana", "--out", key)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	keys, err := contract.ParseApprovers(strings.NewReader(out))
	if err != nil || len(keys) != 1 || keys[0].Name != "ana" {
		t.Fatalf("public line %q: %v", out, err)
	}
	st, err := os.Stat(key)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st.Mode(), err)
	}
	if _, _, code := opsCLI(t, "approvals", "keygen", "--name", "ana", "--out", key); code == 0 {
		t.Fatal("keygen overwrote a key file")
	}
	s, err := loadSigner(key)
	if err != nil || s.name != "ana" {
		t.Fatalf("%v %+v", err, s)
	}
	held, exp := time.UnixMilli(1_700_000_000_000), time.Now().Add(time.Minute)
	hold := contract.Hold{HoldSubject: contract.HoldSubject{HoldID: "h3", Method: "POST", RequestFacts: contract.RequestFacts{URL: "https://a.example/", Digest: "d"}}, HeldAt: held}
	sig := contract.ApprovalSignal{Decision: contract.DecisionApprove, By: s.name}
	if err := sig.Sign(s.key, "wf", hold, exp); err != nil {
		t.Fatal(err)
	}
	if r := keys.Verify("ana", contract.ApprovalMessage("wf", hold, sig.Decision, "ana", "", sig.ExpiresAt), sig.Signature); r != "" {
		t.Fatalf("verify: %s", r)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSigner(key); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a key others can read was used: %v", err)
	}
	if _, _, code := opsCLI(t, "approvals", "keygen", "--name", "a b", "--out", filepath.Join(dir, "x")); code == 0 {
		t.Fatal("keygen took a bad name")
	}
}

func TestDecider(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "ana.key")
	if _, errOut, code := opsCLI(t, "approvals", "keygen", "--name", "ana", "--out", key); code != 0 {
		t.Fatal(errOut)
	}
	env := &cliEnv{Getenv: func(k string) string {
		return map[string]string{"USER": "u", approverKeyEnv: key}[k]
	}}
	d, err := (&personFlags{expiresIn: 5 * time.Minute}).decider(env)
	if err != nil || d.signer == nil || d.by != "ana" || time.Until(d.expires) > 5*time.Minute {
		t.Fatalf("from the environment: %v %+v", err, d)
	}
	if _, err := (&personFlags{key: key, by: "bob", expiresIn: time.Minute}).decider(env); err == nil {
		t.Fatal("--by another name than the key's was taken")
	}
	if _, err := (&personFlags{key: key, expiresIn: 2 * time.Hour}).decider(env); err == nil {
		t.Fatal("--expires-in 2h was taken")
	}
	unsigned := &cliEnv{Getenv: func(k string) string { return map[string]string{"USER": "u"}[k] }}
	for _, bad := range []time.Duration{2 * time.Hour, -5 * time.Minute} {
		// Unsigned decisions carry no expiry, but the flag is checked all
		// the same: a value the command would ignore must not look held.
		if _, err := (&personFlags{expiresIn: bad}).decider(unsigned); err == nil || !strings.Contains(err.Error(), "expires-in") {
			t.Fatalf("unsigned, --expires-in %s: %v", bad, err)
		}
	}
	d, err = (&personFlags{expiresIn: contract.DefaultDecisionValidity}).decider(unsigned)
	if err != nil || d.signer != nil || d.by != "u" {
		t.Fatalf("unsigned: %v %+v", err, d)
	}
	signedSession := &contract.SessionState{Approvers: []string{"bob"}}
	if err := d.admits("wf", signedSession); err == nil || !strings.Contains(err.Error(), "--key") {
		t.Fatalf("an unsigned decision for a signed session: %v", err)
	}
	if err := d.admits("wf", &contract.SessionState{}); err != nil {
		t.Fatal(err)
	}
	d, _ = (&personFlags{key: key, expiresIn: time.Minute}).decider(env)
	if err := d.admits("wf", signedSession); err == nil || !strings.Contains(err.Error(), "not an approver") {
		t.Fatalf("a stranger's decision: %v", err)
	}
}
