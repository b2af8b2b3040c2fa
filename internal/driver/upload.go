package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
)

// Target is one element: an id of the latest snapshot, or a locator
// resolved on the page as it is.
type Target struct {
	ID      string
	Locator *contract.Locator
}

// Upload sets one local file on the file input target names.
func (b *Browser) Upload(ctx context.Context, target Target, file string) error {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	var nid string
	if target.Locator == nil {
		var err error
		if nid, err = NormalizeID(target.ID); err != nil {
			return err
		}
	}
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("driver: upload: %q is not a readable regular file", filepath.Base(file))
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("driver: upload: %w", err)
	}
	t, err := b.tabNow(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := b.pageCtx(ctx, t)
	defer cancel()
	return pendingErr(ctx, b.upload(ctx, t, target, nid, abs))
}

func (b *Browser) upload(ctx context.Context, t *tab, target Target, nid, abs string) error {
	var refs []ref
	var err error
	if target.Locator != nil {
		r, id, err := b.locate(ctx, t, *target.Locator)
		if err != nil {
			return &ActionError{Op: "upload", Kind: KindLocator, Reason: b.clip(err.Error(), 1500), Err: err}
		}
		if _, r.backend, err = b.describe(ctx, r); err != nil {
			return &StaleError{ID: strconv.Itoa(id), Reason: "left the page as it was found"}
		}
		nid, refs = strconv.Itoa(id), []ref{r}
	} else if refs, err = b.lookup(ctx, t, []string{nid}, true); err != nil {
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
