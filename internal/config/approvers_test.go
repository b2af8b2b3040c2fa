package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkerApprovers(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "approvers")
	if err := os.WriteFile(good, []byte("# people\nann AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("ann notakey\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := Worker{ApproverKeys: good}
	if keys, err := w.Approvers(); err != nil || len(keys) != 1 || keys[0].Name != "ann" {
		t.Fatalf("%v %+v", err, keys)
	}
	for _, c := range []struct {
		w    Worker
		want string
	}{
		{Worker{ApproverKeys: good, UnsignedApprovals: true}, "--unsigned-approvals"},
		{Worker{ApproverKeys: bad}, "line 1"},
		{Worker{ApproverKeys: filepath.Join(dir, "missing")}, "cannot read"},
	} {
		if _, err := c.w.Approvers(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.w, err, c.want)
		}
	}
	if keys, err := (&Worker{}).Approvers(); err != nil || keys != nil {
		t.Fatalf("no file: %v %v", keys, err)
	}
}
