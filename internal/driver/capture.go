package driver

import (
	"context"
	"fmt"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// Element resolves an id of the latest snapshot to a rod element, for
// screenshots of one element.
func (b *Browser) Element(ctx context.Context, id string) (*rod.Element, error) {
	nid, err := NormalizeID(id)
	if err != nil {
		return nil, err
	}
	t, err := b.activeTab()
	if err != nil {
		return nil, err
	}
	refs, err := b.lookup(ctx, t, []string{nid}, true)
	if err != nil {
		return nil, err
	}
	r := refs[0]
	target := t.id
	if r.sess != t.sess {
		b.mu.Lock()
		for fid, sid := range b.frameSess {
			if sid == r.sess {
				target = proto.TargetTargetID(fid)
			}
		}
		b.mu.Unlock()
	}
	p, err := b.rb.PageFromTarget(target)
	if err != nil {
		return nil, fmt.Errorf("driver: attach to the element's frame: %w", err)
	}
	return p.Context(ctx).ElementFromNode(&proto.DOMNode{BackendNodeID: r.backend})
}
