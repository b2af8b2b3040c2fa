package driver

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestZZDump(t *testing.T) {
	out := os.Getenv("SNAPDUMP")
	if out == "" {
		t.Skip()
	}
	_ = os.MkdirAll(out, 0o755)
	b := attach(t, Options{})
	pages, _ := filepath.Glob("../demosite/site/*.html")
	for _, p := range pages {
		name := filepath.Base(p)
		u := siteURL + "/" + name
		if name == "iframes.html" {
			u += "?other=" + otherURL
		}
		gotoPage(t, b, u)
		time.Sleep(300 * time.Millisecond)
		s := snap(t, b, SnapshotOptions{})
		i := snap(t, b, SnapshotOptions{Mode: "interactive"})
		_ = os.WriteFile(filepath.Join(out, name+".txt"), []byte(s.Text+"\n---CUT "+s.Cut+"\n"), 0o644)
		_ = os.WriteFile(filepath.Join(out, name+".i.txt"), []byte(i.Text), 0o644)
	}
}
