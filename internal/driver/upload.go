package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-rod/rod/lib/proto"
)

// Upload sets one local file on the file input id of the latest snapshot.
func (b *Browser) Upload(ctx context.Context, id string, file string) error {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	nid, err := NormalizeID(id)
	if err != nil {
		return err
	}
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("driver: upload: %q is not a readable regular file", filepath.Base(file))
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("driver: upload: %w", err)
	}
	t, err := b.activeTab()
	if err != nil {
		return err
	}
	refs, err := b.lookup(ctx, t, []string{nid}, true)
	if err != nil {
		return err
	}
	c := b.client(ctx, refs[0].sess)
	desc, err := proto.DOMDescribeNode{BackendNodeID: refs[0].backend}.Call(c)
	if err != nil {
		return &ActionError{Op: "upload", Kind: KindNotVisible, Reason: "the element is gone; take a new snapshot", Err: err}
	}
	isFile := strings.EqualFold(desc.Node.NodeName, "input")
	typ := ""
	for i := 0; i+1 < len(desc.Node.Attributes); i += 2 {
		if strings.EqualFold(desc.Node.Attributes[i], "type") {
			typ = strings.ToLower(desc.Node.Attributes[i+1])
		}
	}
	if !isFile || typ != "file" {
		return &ActionError{Op: "upload", Kind: KindInvalid, Reason: fmt.Sprintf("[%s] is not a file input; upload to an <input type=file>", nid)}
	}
	if err := (proto.DOMSetFileInputFiles{Files: []string{abs}, BackendNodeID: refs[0].backend}).Call(c); err != nil {
		return &ActionError{Op: "upload", Kind: KindBrowser, Reason: "the browser refused the file", Err: err}
	}
	return nil
}
