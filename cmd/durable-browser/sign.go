package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/oneline"
)

// approverKeyEnv names the private key file when --key is not given.
const approverKeyEnv = "DURABLE_BROWSER_APPROVER_KEY"

// keygen makes an approver's ed25519 key pair: the private key goes to out
// (mode 0600, never overwritten); the public line for --approver-keys is
// printed.
func keygen(env *cliEnv, name, out string) error {
	if !contract.ValidApproverName(name) {
		return fmt.Errorf("keygen --name %q: an approver name is 1-64 letters, digits, . _ @ -", name)
	}
	if out == "" {
		return errors.New("keygen --out: name the file the private key is written to")
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("keygen --out %s: the file exists, and an existing key file is never overwritten: name a new file", out)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("keygen --out %s: the directory %s does not exist: create it first (mkdir -p %s; a key directory should be mode 0700)", out, filepath.Dir(out), filepath.Dir(out))
	case err != nil:
		return fmt.Errorf("keygen --out: writing the private key: %w", err)
	}
	body := "# durable-browser approver private key: keep it secret\n" + name + " " + base64.StdEncoding.EncodeToString(priv.Seed()) + "\n"
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, contract.Approver{Name: name, PublicKey: pub}.Line())
	fmt.Fprintf(env.Stderr, "wrote the private key of %s to %s; add the line above to the workers' --approver-keys file\n", name, out)
	return nil
}

// signer is an approver's private key, read from a key file.
type signer struct {
	name string
	key  ed25519.PrivateKey
}

// loadSigner reads a key file written by keygen: "name base64-seed". It
// refuses a file others can read.
func loadSigner(path string) (*signer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading the approver key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("approver key %s can be read by others (mode %v); chmod 600 it", path, st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the approver key: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !contract.ValidApproverName(f[0]) {
			break
		}
		seed, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil || len(seed) != ed25519.SeedSize {
			break
		}
		return &signer{name: f[0], key: ed25519.NewKeyFromSeed(seed)}, nil
	}
	return nil, fmt.Errorf("approver key %s: want a line \"name base64-seed\" as `durable-browser approvals keygen` writes", path)
}

// decider is who answers, and how: signed (with a key) or not.
type decider struct {
	by      string
	signer  *signer
	expires time.Time
}

// decider reads --key/$DURABLE_BROWSER_APPROVER_KEY, --by and --expires-in.
func (f *personFlags) decider(env *cliEnv) (*decider, error) {
	// Checked signed or not: an unsigned decision carries no expiry, but
	// a flag the command would ignore must not look as if it held.
	if f.expiresIn <= 0 || f.expiresIn > contract.MaxDecisionValidity {
		return nil, &config.Error{Flag: "expires-in", Problem: fmt.Sprintf("%s is not in (0, %s]", f.expiresIn, contract.MaxDecisionValidity), Fix: "e.g. 5m"}
	}
	if f.byGiven {
		if err := checkDecisionText("by", f.by, 1, contract.MaxDecisionBy); err != nil {
			return nil, err
		}
	}
	path := f.key
	if path == "" {
		path = env.Getenv(approverKeyEnv)
	}
	if path == "" {
		who := by(env, f.by)
		if problem, rule := decisionTextProblem(who, 1, contract.MaxDecisionBy); problem != "" {
			// Not given: the login name stands in for it.
			return nil, &config.Error{Flag: "by", Problem: fmt.Sprintf("not given, and the login name that would stand in for it %s", problem),
				Fix: "give --by NAME: " + rule}
		}
		return &decider{by: who}, nil
	}
	s, err := loadSigner(path)
	if err != nil {
		return nil, err
	}
	if f.by != "" && f.by != s.name {
		return nil, &config.Error{Flag: "by", Problem: fmt.Sprintf("%q, but the key is %s's", f.by, s.name), Fix: "leave --by out when signing: the key names its approver"}
	}
	return &decider{by: s.name, signer: s, expires: time.Now().Add(f.expiresIn)}, nil
}

// admits refuses early a decision the session would reject: unsigned
// where approvers are configured, or by someone not among them.
func (d *decider) admits(wfID string, st *contract.SessionState) error {
	if len(st.Approvers) == 0 {
		return nil
	}
	if d.signer == nil {
		return fmt.Errorf("session %s acts only on decisions signed by an approver (%s): give --key <file> or set $%s (keys come from `durable-browser approvals keygen`)",
			wfID, strings.Join(st.Approvers, ", "), approverKeyEnv)
	}
	if !slices.Contains(st.Approvers, d.by) {
		return fmt.Errorf("%s is not an approver of session %s (approvers: %s); the decision would be rejected", d.by, wfID, strings.Join(st.Approvers, ", "))
	}
	return nil
}

// confirm waits briefly for the session to act on a signed decision: it
// fails when the session recorded it as rejected (a rejection of that
// kind, id and signer that before, the state queried before sending, did
// not list), and is content when decided says the decision took, or time
// runs out (the session reads the signal once a worker runs it).
func (o *opsFlags) confirm(ctx context.Context, c client.Client, wfID, kind, id, by string, before *contract.SessionState, decided func(*contract.SessionState) bool) error {
	known := map[contract.RejectedDecision]bool{}
	if before != nil {
		for _, r := range before.Rejected {
			known[r] = true
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		st, err := o.peopleState(ctx, c, wfID)
		if err != nil {
			return nil
		}
		for _, r := range st.Rejected {
			if r.Kind == kind && r.ID == id && r.By == by && !known[r] {
				return errors.New(rejectionText(wfID, r))
			}
		}
		if decided(st) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}

func rejectionText(wfID string, r contract.RejectedDecision) string {
	why := map[string]string{
		contract.RejectUnsigned:      "it was not signed",
		contract.RejectUnknownSigner: "the signer is not among the session's approvers",
		contract.RejectBadSignature:  "the signature does not verify with that approver's key",
		contract.RejectExpired:       "it had expired when the session read it",
		contract.RejectExpiryTooFar:  "its expiry is too far ahead",
		contract.RejectNoExpiry:      "it has no expiry",
		contract.RejectNotPending:    "nothing with that id is pending",
		contract.RejectAlreadyDone:   "it was already decided",
	}[r.Reason]
	if why == "" {
		why = r.Reason
	}
	return oneline.Safe(fmt.Sprintf("session %s rejected the %s for %s by %q: %s (%s)", wfID, r.Kind, r.ID, r.By, why, r.Reason))
}
