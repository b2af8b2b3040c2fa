package activities

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// exportPage builds a download link from the password as it is typed, on
// the origin the password belongs to: a text file holding it, a file with
// unknown extension (text by its bytes), a binary file holding it, and a binary
// file without it.
const exportPage = `<!doctype html><title>export</title>
<label>Password <input type="password" id="pw"></label>
<a id="txt">Export text</a> <a id="raw">Export notes</a> <a id="zip">Export zip</a> <a id="bin">Export plain</a>
<script>
const link = (id, name, parts) => {
  const a = document.getElementById(id);
  a.download = name;
  a.href = URL.createObjectURL(new Blob(parts));
};
document.getElementById('pw').addEventListener('input', e => {
  const v = e.target.value;
  link('txt', 'export.txt', ['secret is ' + v]);
  link('raw', 'notes.q7x', ['note: ' + v + '\n']);
  link('zip', 'export.zip', [new Uint8Array([0x50, 0x4b, 3, 4, 0, 0xff, 0xfe]), v, new Uint8Array([0, 1, 2])]);
  link('bin', 'plain.zip', [new Uint8Array([0x50, 0x4b, 3, 4, 0, 0xff, 0xfe, 7, 7, 7])]);
});
</script>`

// A download holding a secret typed in the session is not filed as it came:
// a text file (by extension or by its bytes) is filed redacted, its answer's
// size, sha256, inline copy and evidence all the redacted body's and
// redacted true; a binary file holding it is withheld, nothing filed; a
// binary file without it is filed as captured. No object filed holds the
// secret.
func TestDownloadHoldingTypedSecretFiledRedacted(t *testing.T) {
	const pw = "correct-horse-battery"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, exportPage)
	}))
	t.Cleanup(srv.Close)
	mem := evidence.NewMemory()
	h := chromeHarness(t, func(o *Options) {
		o.Evidence = &evidence.Filer{Store: mem}
		o.Secrets = &redact.Secrets{Source: originSecrets{origin: srv.URL, values: map[string]string{"PASSWORD": pw}}}
	})
	ref := h.create("dl-1", contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}})
	if _, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(fmt.Sprintf(
		`[{"op":"goto","url":%q},{"op":"fill","locator":{"label":"Password"},"value":"{{secret:PASSWORD}}"},`+
			`{"op":"click","locator":{"text":"Export text"}},{"op":"click","locator":{"text":"Export notes"}},`+
			`{"op":"click","locator":{"text":"Export zip"}},{"op":"click","locator":{"text":"Export plain"}}]`, srv.URL+"/")))); err != nil {
		t.Fatal(err)
	}

	// The four downloads, once Chrome has begun them all.
	byName := map[string]contract.Download{}
	deadline := time.Now().Add(20 * time.Second)
	for len(byName) < 4 {
		res, err := call[contract.DownloadsResult](h, contract.ActivityDownloads, contract.DownloadsRequest{Call: contract.Call{Session: ref}})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Downloads {
			byName[d.Name] = d
		}
		if len(byName) < 4 && time.Now().After(deadline) {
			t.Fatalf("downloads %+v, want export.txt, notes, export.zip and plain.zip", res.Downloads)
		}
	}

	for name, want := range map[string]string{"export.txt": "secret is [redacted]", "notes.q7x": "note: [redacted]\n"} {
		d := byName[name]
		cc := d.Evidence
		body, rec, err := evidence.GetVerified(context.Background(), mem, cc.Key)
		if err != nil || rec == nil {
			t.Fatalf("%s: evidence %q: %v (receipt %v)", name, cc.Key, err, rec)
		}
		sum := sha256.Sum256(body)
		if string(body) != want || !d.Redacted {
			t.Errorf("%s filed as %q (redacted %v), want %q redacted", name, body, d.Redacted, want)
		}
		if hx := hex.EncodeToString(sum[:]); d.Size != int64(len(body)) || cc.Size != int64(len(body)) || rec.Size != int64(len(body)) ||
			d.SHA256 != hx || cc.SHA256 != hx || rec.SHA256 != hx || !strings.Contains(cc.Key, hx[:12]) {
			t.Errorf("%s: answer size %d sha256 %s, claim check %d %s (key %s), receipt %d %s; the filed body is %d bytes, %s",
				name, d.Size, d.SHA256, cc.Size, cc.SHA256, cc.Key, rec.Size, rec.SHA256, len(body), hx)
		}
		if cc.Inline != string(body) || !strings.HasPrefix(cc.ContentType, "text/plain") {
			t.Errorf("%s: inline %q (%s), want the filed body as text", name, cc.Inline, cc.ContentType)
		}
	}

	zip := byName["export.zip"]
	if zip.Evidence.Key != "" || zip.SHA256 != "" || !strings.Contains(zip.Withheld, "PASSWORD") || zip.Redacted {
		t.Errorf("a binary download holding the typed secret: %+v; want it withheld, naming the secret, nothing filed", zip)
	}
	plain := byName["plain.zip"]
	raw := []byte{0x50, 0x4b, 3, 4, 0, 0xff, 0xfe, 7, 7, 7}
	if body, _, err := evidence.GetVerified(context.Background(), mem, plain.Evidence.Key); err != nil || !bytes.Equal(body, raw) ||
		plain.Redacted || plain.Withheld != "" || plain.Size != int64(len(raw)) {
		t.Errorf("a binary download without a secret: %+v, filed %x (%v); want it filed as captured", plain, body, err)
	}

	for _, k := range mem.Keys() {
		b, _, err := mem.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(pw)) {
			t.Errorf("%s holds the secret: %q", k, b)
		}
	}
}
