package evidence

import (
	"context"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Lister lists a store's keys under a prefix (relative to the store's own
// prefix), for readers that find objects by place rather than by a key they
// were given: a workflow's recording chunks.
type Lister interface {
	List(ctx context.Context, prefix string) ([]string, error)
}

// maxList bounds a listing, so a huge prefix cannot exhaust memory.
const maxList = 100000

// List returns the keys under prefix, sorted, relative to the store prefix.
func (s *S3Store) List(ctx context.Context, prefix string) ([]string, error) {
	full := s.ObjectKey(prefix)
	var out []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(full)})
	for p.HasMorePages() && len(out) < maxList {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.wrap("listing", prefix, err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			if s.prefix != "" {
				k = strings.TrimPrefix(k, s.prefix+"/")
			}
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// List returns the keys under prefix, sorted.
func (m *Memory) List(ctx context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.objects {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}
