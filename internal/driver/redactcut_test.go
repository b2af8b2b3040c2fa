package driver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/redact"

	"github.com/durable-browser/durable-browser/contract"
)

// cutSecret is a registered 40-character secret.
const cutSecret = "Zq7vXw2LmN9pR4tY6uB1cD3eF5gH8jK0aS2dQ4wE"

// leaks reports an 8-character piece of secret found in s.
func leaks(s, secret string) string {
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+8]) {
			return secret[i : i+8]
		}
	}
	return ""
}

func TestClipRedactsBeforeCutting(t *testing.T) {
	r := redact.New()
	r.Register(cutSecret)
	b := &Browser{o: Options{Redact: r.String}}
	// Each bound the driver cuts page text to, with the secret placed so
	// the cut falls 20 characters into it.
	for _, n := range []int{40, 60, 100, 150, 200, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			in := strings.Repeat("x", n-20) + cutSecret + " tail"
			out := b.clip(in, n)
			if piece := leaks(out, cutSecret); piece != "" {
				t.Fatalf("clip(%d) leaves %q of the secret: %q", n, piece, out)
			}
			if !strings.HasPrefix(out, strings.Repeat("x", n-20)) {
				t.Fatalf("clip(%d) lost the text before the secret: %q", n, out)
			}
		})
	}
}

func TestSnapshotValueCutAfterRedaction(t *testing.T) {
	r := redact.New()
	r.Register(cutSecret)
	b := attach(t, Options{Redact: r.String})
	gotoPage(t, b, siteURL+"/form.html")
	s := snap(t, b, SnapshotOptions{})
	email := idOf(t, s.Text, "Email")
	// value= is cut at 100 characters: the cut falls mid-secret.
	typed := strings.Repeat("a", 80) + cutSecret
	mustRun(t, b, fmt.Sprintf(`[{"op":"fill","id":"%s","value":%q}]`, email, typed))
	s = snap(t, b, SnapshotOptions{})
	if piece := leaks(s.Text, cutSecret); piece != "" {
		t.Fatalf("snapshot shows %q of the secret:\n%s", piece, s.Text)
	}
	if !strings.Contains(s.Text, strings.Repeat("a", 80)) {
		t.Fatalf("snapshot lost the value before the secret:\n%s", s.Text)
	}
}

// A download's name is redacted before it is cut to 120 characters: a
// secret straddling the cut is hidden whole, in the listing and on disk.
func TestDownloadNameRedactedBeforeCut(t *testing.T) {
	r := redact.New()
	r.Register(cutSecret)
	// The cut at 120 falls 20 characters into the secret.
	name := strings.Repeat("n", 100) + cutSecret + ".csv"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/file" {
			w.Header().Set("Content-Type", "text/csv")
			w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
			fmt.Fprint(w, "a,b\n1,2\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>dl</title><a href="/file">Get the file</a>`)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	b := attach(t, Options{DownloadDir: dir, Redact: r.String})
	gotoPage(t, b, srv.URL+"/")
	s := snap(t, b, SnapshotOptions{})
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"}]`, idOf(t, s.Text, "Get the file")))
	var dls []contract.Download
	eventually(t, "the download", func() bool {
		var err error
		dls, err = b.Downloads(ctxT(t))
		return err == nil && len(dls) == 1
	})
	if !strings.HasPrefix(dls[0].Name, strings.Repeat("n", 100)+"[redacted]") {
		t.Fatalf("download named %q, want the secret redacted", dls[0].Name)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := []string{dls[0].Name}
	for _, e := range entries {
		seen = append(seen, e.Name())
	}
	for _, n := range seen {
		if piece := leaks(n, cutSecret); piece != "" {
			t.Fatalf("%q keeps %q of the secret", n, piece)
		}
	}
}

// A secret a page splits across the spans of a heading, button or link
// shows as the element's redacted name only: its pieces, which alone are
// not the secret, are not listed below it, as a name's repeated text is
// not. A name that is not a secret keeps the rule.
func TestSnapshotHidesASplitSecretsPieces(t *testing.T) {
	const secret = "HunterSecret2468Zz"
	r := redact.New()
	r.Register(secret)
	base := serveHTML(t, `<!doctype html><main><h2><span>Hun</span><span>terSec</span><span>ret2468Zz</span></h2>`+
		`<h2><span>Fol</span><span>kloreMe</span><span>lody9876</span></h2>`+
		`<button><span>Hunte</span><span>rSecret2468Zz</span></button><a href="/q"><span>HunterSecret</span><span>2468Zz</span></a></main>`)
	b := attach(t, Options{Redact: r.String})
	mustRun(t, b, `[{"op":"goto","url":"`+base+`/"}]`)
	s := snap(t, b, SnapshotOptions{})
	for _, piece := range []string{"Hun", "terSec", "ret2468Zz", "rSecret", "2468Zz"} {
		if strings.Contains(s.Text, piece) {
			t.Fatalf("the snapshot shows %q, a piece of the secret:\n%s", piece, s.Text)
		}
	}
	if strings.Count(s.Text, redact.Placeholder) != 3 || !strings.Contains(s.Text, `heading "FolkloreMelody9876"`) {
		t.Fatalf("want three redacted names and the other heading whole:\n%s", s.Text)
	}
}
