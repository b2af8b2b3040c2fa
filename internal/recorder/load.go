package recorder

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/durable-browser/durable-browser/internal/evidence"
)

// Store is what reading a recording needs of the evidence store.
type Store interface {
	evidence.Store
	evidence.Lister
}

// ErrNoRecording says the workflow has no recording chunks.
var ErrNoRecording = errors.New("no recording found")

// Load reads and checks every chunk of a workflow's recordings: each is
// verified against the hash recorded when it was filed, then parsed.
func Load(ctx context.Context, store Store, workflowID string) ([]*Chunk, error) {
	keys, err := store.List(ctx, evidence.CleanSegment(workflowID)+"/")
	if err != nil {
		return nil, err
	}
	var out []*Chunk
	for _, k := range keys {
		if !strings.HasSuffix(k, "."+ChunkExt) || !strings.Contains(k[strings.LastIndexByte(k, '/')+1:], "-"+Tool+"-") {
			continue
		}
		b, _, err := store.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", k, err)
		}
		c, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w for workflow %q: was it opened with record set (SessionOptions.record, call --record)?", ErrNoRecording, workflowID)
	}
	return out, nil
}
