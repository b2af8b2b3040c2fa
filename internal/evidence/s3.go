package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// S3Options configures an S3 (or S3-compatible) evidence store.
type S3Options struct {
	Bucket string
	// Prefix is prepended to every key ("a/b" becomes "a/b/<key>").
	Prefix string
	// Region defaults to the AWS config chain's, else us-east-1.
	Region string
	// Endpoint overrides the AWS endpoint, e.g. http://127.0.0.1:7070.
	Endpoint string
	// PathStyle addresses buckets as <endpoint>/<bucket>; most
	// S3-compatible servers need it.
	PathStyle bool
	// SSE is the server-side encryption: "", "AES256" or "aws:kms".
	SSE string
	// KMSKeyID picks the KMS key for "aws:kms"; empty uses the bucket's.
	KMSKeyID string
	// AccessKey and SecretKey are optional static credentials; without them
	// the standard AWS environment / shared config chain is used.
	AccessKey, SecretKey string
	// NoInstanceMetadata leaves the EC2 instance metadata service
	// (169.254.169.254) out of that chain: a command a person runs says
	// which settings it needs before any request leaves the machine,
	// instead of asking an address off it for credentials first.
	NoInstanceMetadata bool
}

// metaSHA256 is the user-metadata name (x-amz-meta-sha256) holding the hash.
const metaSHA256 = "sha256"

// S3Store files evidence in an S3 bucket.
type S3Store struct {
	client   *s3.Client
	bucket   string
	prefix   string
	sse      types.ServerSideEncryption
	kmsKeyID string
}

var _ Store = (*S3Store)(nil)

// NewS3 builds an S3 store. It does not contact the server.
func NewS3(ctx context.Context, o S3Options) (*S3Store, error) {
	if o.Bucket == "" {
		return nil, errors.New("evidence S3 store needs a bucket name")
	}
	var sse types.ServerSideEncryption
	switch o.SSE {
	case "":
	case "AES256":
		sse = types.ServerSideEncryptionAes256
	case "aws:kms":
		sse = types.ServerSideEncryptionAwsKms
	default:
		return nil, fmt.Errorf("evidence S3 SSE %q is not supported: use \"\", \"AES256\" or \"aws:kms\"", o.SSE)
	}
	if o.KMSKeyID != "" && o.SSE != "aws:kms" {
		return nil, errors.New("evidence S3 KMSKeyID is set but SSE is not \"aws:kms\": set SSE to aws:kms or drop the key id")
	}
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return nil, errors.New("evidence S3 static credentials need both an access key and a secret key (or neither, to use the AWS config chain)")
	}
	var loads []func(*config.LoadOptions) error
	if o.Region != "" {
		loads = append(loads, config.WithRegion(o.Region))
	}
	if o.NoInstanceMetadata {
		loads = append(loads, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	if o.AccessKey != "" {
		loads = append(loads, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.AccessKey, o.SecretKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration for evidence: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.UsePathStyle = o.PathStyle
		// Every body read is checked against the SHA-256 recorded when it
		// was filed (verify), which says what went wrong; the SDK's own
		// CRC check would fail first with a message about its checksum.
		so.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3Store{
		client:   client,
		bucket:   o.Bucket,
		prefix:   strings.Trim(o.Prefix, "/"),
		sse:      sse,
		kmsKeyID: o.KMSKeyID,
	}, nil
}

// ErrNoCredentials is returned by CheckCredentials when the AWS
// configuration chain finds no credentials.
var ErrNoCredentials = errors.New("no S3 credentials found")

// CheckCredentials resolves the store's credentials, so a command can say
// which settings it needs instead of a request failing later. It sends no
// request when the chain has no source that asks one: static keys, the
// environment and shared files are read locally; the instance metadata
// service is asked unless NoInstanceMetadata left it out.
func (s *S3Store) CheckCredentials(ctx context.Context) error {
	p := s.client.Options().Credentials
	if p == nil {
		return ErrNoCredentials
	}
	if _, err := p.Retrieve(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrNoCredentials, err)
	}
	return nil
}

// Bucket is the store's bucket.
func (s *S3Store) Bucket() string { return s.bucket }

// Client is the store's S3 client, for the named states kept in the same
// bucket (internal/states) with the same credentials.
func (s *S3Store) Client() *s3.Client { return s.client }

// Encryption is the server-side encryption the store asks for, and its KMS
// key id.
func (s *S3Store) Encryption() (types.ServerSideEncryption, string) { return s.sse, s.kmsKeyID }

// ObjectKey is the full S3 key for a store key (the store prefix applied).
func (s *S3Store) ObjectKey(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

// Put implements Store. It writes with If-None-Match, so an object already
// at the key (a retried filing, a concurrent writer) is never rewritten;
// only when S3 refuses the write does it look at what is there: one
// request for a new object, not a look and then a write.
func (s *S3Store) Put(ctx context.Context, key string, body []byte, contentType string) (PutResult, error) {
	return s.put(ctx, key, bytes.NewReader(body), int64(len(body)), SHA256Hex(body), contentType, false)
}

// PutReader implements Store: it streams size bytes from r; the SDK reads r
// to sign the request, seeks back and reads it again to send it. It looks
// first, so a file already filed (a retried download's) is not read and
// sent again only to be refused.
func (s *S3Store) PutReader(ctx context.Context, key string, r io.ReadSeeker, size int64, sum, contentType string) (PutResult, error) {
	return s.put(ctx, key, r, size, sum, contentType, true)
}

func (s *S3Store) put(ctx context.Context, key string, r io.ReadSeeker, size int64, sum, contentType string, look bool) (PutResult, error) {
	if err := CheckKey(key); err != nil {
		return PutResult{}, err
	}
	if look {
		if m, err := s.Head(ctx, key); err == nil {
			return existing(key, m.SHA256, sum, m.Size)
		} else if !errors.Is(err, ErrNotFound) {
			return PutResult{}, err
		}
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return PutResult{}, err
	}
	in := &s3.PutObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.ObjectKey(key)),
		// A seekable body: over plain HTTP the SDK refuses a stream it
		// cannot rewind to checksum and sign.
		Body:          r,
		ContentLength: aws.Int64(size),
		Metadata:      map[string]string{metaSHA256: sum},
		IfNoneMatch:   aws.String("*"),
	}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	if s.sse != "" {
		in.ServerSideEncryption = s.sse
		if s.kmsKeyID != "" {
			in.SSEKMSKeyId = aws.String(s.kmsKeyID)
		}
	}
	if _, err := s.client.PutObject(ctx, in); err != nil {
		if S3Status(err) == http.StatusPreconditionFailed || S3Status(err) == http.StatusConflict {
			// Already there: a retry's, or a concurrent writer's.
			m, herr := s.Head(ctx, key)
			if herr != nil {
				return PutResult{}, herr
			}
			return existing(key, m.SHA256, sum, m.Size)
		}
		return PutResult{}, s.wrap("writing", key, err)
	}
	return PutResult{Key: key, SHA256: sum, Size: size}, nil
}

// Get implements Store.
func (s *S3Store) Get(ctx context.Context, key string) ([]byte, Meta, error) {
	if err := CheckKey(key); err != nil {
		return nil, Meta{}, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.ObjectKey(key))})
	if err != nil {
		return nil, Meta{}, s.wrap("reading", key, err)
	}
	defer out.Body.Close()
	var r io.Reader = out.Body
	if n := aws.ToInt64(out.ContentLength); n >= 0 && out.ContentLength != nil {
		r = io.LimitReader(r, n) // no more than the object says it holds
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, Meta{}, s.wrap("reading", key, err)
	}
	m := objectMeta(key, out.Metadata, out.ContentLength, out.ContentType, out.ETag, out.LastModified)
	if err := verify(key, body, m.SHA256); err != nil {
		return nil, m, err
	}
	return body, m, nil
}

// Head implements Store.
func (s *S3Store) Head(ctx context.Context, key string) (Meta, error) {
	if err := CheckKey(key); err != nil {
		return Meta{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.ObjectKey(key))})
	if err != nil {
		return Meta{}, s.wrap("looking up", key, err)
	}
	return objectMeta(key, out.Metadata, out.ContentLength, out.ContentType, out.ETag, out.LastModified), nil
}

// objectMeta is the Meta of an object as S3 describes it (GetObject and
// HeadObject answer the same fields in different types).
func objectMeta(key string, metadata map[string]string, size *int64, contentType, etag *string, modified *time.Time) Meta {
	return Meta{
		Key:          key,
		SHA256:       MetaValue(metadata, metaSHA256),
		Size:         aws.ToInt64(size),
		ContentType:  aws.ToString(contentType),
		ETag:         aws.ToString(etag),
		LastModified: aws.ToTime(modified),
	}
}

// wrap names the object and maps "not there" to ErrNotFound.
func (s *S3Store) wrap(doing, key string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("s3://%s/%s: %w", s.bucket, s.ObjectKey(key), ErrNotFound)
	}
	if code := S3Code(err); code == "NoSuchBucket" {
		return fmt.Errorf("%s s3://%s/%s: bucket %q does not exist: create it or fix the configured bucket: %w", doing, s.bucket, s.ObjectKey(key), s.bucket, err)
	}
	return fmt.Errorf("%s s3://%s/%s: %w", doing, s.bucket, s.ObjectKey(key), err)
}

func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	// HEAD answers carry no body, so a missing key may only show as a 404;
	// a missing bucket is a different failure.
	return S3Status(err) == http.StatusNotFound && S3Code(err) != "NoSuchBucket"
}

// S3Status is the HTTP status of an S3 error, 0 when there is none. Other
// packages keeping objects in the bucket (states) read failures with it.
func S3Status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// S3Code is an S3 error's code ("NoSuchBucket"), "" when there is none.
func S3Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// MetaValue reads user metadata case-insensitively (servers differ).
func MetaValue(m map[string]string, name string) string {
	if v, ok := m[name]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
