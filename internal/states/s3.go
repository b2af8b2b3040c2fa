package states

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/durable-browser/durable-browser/internal/evidence"
)

// The store's S3 calls. Each returns S3's error as it is, so a caller can
// tell notFound and conflict, and names what failed itself.

// get reads at most limit bytes of the object at key, and its ETag.
func (s *Store) get(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	out, err := s.o.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.o.Bucket), Key: aws.String(key)})
	if err != nil {
		return nil, "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, limit))
	return b, aws.ToString(out.ETag), err
}

// meta reads the metadata of the object at key.
func (s *Store) meta(ctx context.Context, key string) (map[string]string, error) {
	h, err := s.o.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.o.Bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	return h.Metadata, nil
}

// put writes body at key, encrypted at rest as Options ask, only over the
// object whose ETag is etag, or with etag "" only where there is none: a
// writer never overwrites what it did not read (conflict tells it lost).
func (s *Store) put(ctx context.Context, key, contentType string, body []byte, meta map[string]string, etag string) error {
	in := &s3.PutObjectInput{
		Bucket: aws.String(s.o.Bucket), Key: aws.String(key),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		ContentType: aws.String(contentType), Metadata: meta,
	}
	if etag == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(etag)
	}
	if s.o.SSE != "" {
		in.ServerSideEncryption = s.o.SSE
		if s.o.KMSKeyID != "" {
			in.SSEKMSKeyId = aws.String(s.o.KMSKeyID)
		}
	}
	_, err := s.o.Client.PutObject(ctx, in)
	return err
}

// remove deletes the object at key.
func (s *Store) remove(ctx context.Context, key string) error {
	_, err := s.o.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.o.Bucket), Key: aws.String(key)})
	return err
}

// object is one object a listing names.
type object struct {
	key      string
	modified time.Time
}

// list names every object under prefix, in key order.
func (s *Store) list(ctx context.Context, prefix string) ([]object, error) {
	var out []object
	p := s3.NewListObjectsV2Paginator(s.o.Client, &s3.ListObjectsV2Input{Bucket: aws.String(s.o.Bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			out = append(out, object{key: aws.ToString(o.Key), modified: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// conflict is S3's answer to a conditional write that lost.
func conflict(err error) bool {
	st := evidence.S3Status(err)
	return st == http.StatusPreconditionFailed || st == http.StatusConflict
}

func notFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	return errors.As(err, &nsk) || errors.As(err, &nf) || evidence.S3Status(err) == http.StatusNotFound && evidence.S3Code(err) != "NoSuchBucket"
}
