package states

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/durable-browser/durable-browser/internal/evidence"
)

// Options builds a Store.
type Options struct {
	Client *s3.Client
	Bucket string
	// Prefix is the key prefix of every state (default "states").
	Prefix string
	// SSE and KMSKeyID ask S3 to encrypt the objects at rest as well
	// ("aws:kms" with a key id, or "AES256"); the payload is sealed anyway.
	SSE      types.ServerSideEncryption
	KMSKeyID string
	// Sealer seals and opens versions; without one (an operator listing
	// or deleting with no key) no state is read or written.
	Sealer *Sealer
	// Keep is how many versions of a name are kept (default 5).
	Keep int
	// LeaseTTL is how long a lease lasts unless renewed (default 2m).
	LeaseTTL time.Duration
	Now      func() time.Time
}

// Store keeps named states in S3:
//
//	<prefix>/<NameHash(name)>/v/<version, 20 digits>   sealed State
//	<prefix>/<NameHash(name)>/lease.json                who writes it, until when
type Store struct{ o Options }

// New makes a store; it does not contact S3.
func New(o Options) (*Store, error) {
	if o.Client == nil || o.Bucket == "" {
		return nil, errors.New("states: a store needs an S3 client and a bucket")
	}
	if o.Prefix == "" {
		o.Prefix = "states"
	}
	o.Prefix = strings.Trim(o.Prefix, "/")
	if o.Keep <= 0 {
		o.Keep = 5
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store{o: o}, nil
}

// Under is a store of the same bucket, key and sealing under another key
// prefix, keeping keep versions a name (session checkpoints live beside
// named states, never among them).
func (s *Store) Under(prefix string, keep int) *Store {
	o := s.o
	o.Prefix = strings.Trim(prefix, "/")
	if keep > 0 {
		o.Keep = keep
	}
	return &Store{o: o}
}

// LeaseTTL is how long a lease lasts unless renewed.
func (s *Store) LeaseTTL() time.Duration { return s.o.LeaseTTL }

func (s *Store) dir(hash string) string { return s.o.Prefix + "/" + hash + "/" }

// VersionKey is the key suffix of a version: zero-padded, so S3's
// lexical listing order is version order.
func VersionKey(v int64) string { return fmt.Sprintf("v/%020d", v) }

// ParseVersion reads a VersionKey suffix; ok is false for anything else.
func ParseVersion(suffix string) (int64, bool) {
	d, ok := strings.CutPrefix(suffix, "v/")
	if !ok || len(d) != 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(d, 10, 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}

// aad binds a sealed version to its name's hash and its version number.
func aad(hash string, v int64) string {
	return "durable-browser state " + hash + " " + strconv.FormatInt(v, 10)
}

const metaDigest = "digest"

// versions lists a name's versions, oldest first.
func (s *Store) versions(ctx context.Context, hash string) ([]int64, error) {
	objs, err := s.list(ctx, s.dir(hash)+"v/")
	if err != nil {
		return nil, fmt.Errorf("listing state versions: %w", err)
	}
	var out []int64
	for _, o := range objs {
		if v, ok := ParseVersion(strings.TrimPrefix(o.key, s.dir(hash))); ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Newest reads the newest version of name: nil and 0 when there is none.
// A version that fails authentication is ErrTampered, never skipped: an
// older one would silently bring back a signed-out state.
func (s *Store) Newest(ctx context.Context, name string) (*State, int64, error) {
	hash := NameHash(name)
	vs, err := s.versions(ctx, hash)
	if err != nil || len(vs) == 0 {
		return nil, 0, err
	}
	v := vs[len(vs)-1]
	st, err := s.read(ctx, name, hash, v)
	return st, v, err
}

// ErrNoKey is returned when a store without a sealer is asked to read or
// write a state.
var ErrNoKey = errors.New("no state key (" + EnvKey + ") to open or seal states with")

func (s *Store) read(ctx context.Context, name, hash string, v int64) (*State, error) {
	if s.o.Sealer == nil {
		return nil, ErrNoKey
	}
	st, _, err := s.fetch(ctx, s.dir(hash)+VersionKey(v), hash, v, fmt.Sprintf("state version %d", v))
	if err != nil {
		return nil, err
	}
	if name != "" && st.Name != name {
		return nil, ErrTampered
	}
	return st, nil
}

// open decrypts a sealed version of hash and checks it names a state of
// that hash; it answers the state and its plaintext.
func (s *Store) open(hash string, v int64, sealed []byte) (*State, []byte, error) {
	pt, err := s.o.Sealer.Open(aad(hash, v), sealed)
	if err != nil {
		return nil, nil, err
	}
	var st State
	if err := json.Unmarshal(pt, &st); err != nil || NameHash(st.Name) != hash {
		return nil, nil, ErrTampered
	}
	return &st, pt, nil
}

// Plaintext opens the version object at key (as the bucket lists it, under
// this store's prefix) as Newest does, and answers its plaintext: an audit
// such as the leak scan reads every version, not only a name's newest.
func (s *Store) Plaintext(ctx context.Context, key string) ([]byte, error) {
	if s.o.Sealer == nil {
		return nil, ErrNoKey
	}
	hash, rest, ok := strings.Cut(strings.TrimPrefix(key, s.o.Prefix+"/"), "/")
	v, isVersion := ParseVersion(rest)
	if !ok || !strings.HasPrefix(key, s.o.Prefix+"/") || !isHash(hash) || !isVersion {
		return nil, fmt.Errorf("%q is not a state version under %s/", key, s.o.Prefix)
	}
	_, pt, err := s.fetch(ctx, key, hash, v, key)
	return pt, err
}

// fetch reads the sealed version v of hash at key (what names it in an
// error) and opens it.
func (s *Store) fetch(ctx context.Context, key, hash string, v int64, what string) (*State, []byte, error) {
	sealed, _, err := s.get(ctx, key, MaxBytes+1024)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", what, err)
	}
	return s.open(hash, v, sealed)
}

// Saved is what a Save did.
type Saved struct {
	// Version is the newest version after the save.
	Version int64
	// Wrote says a version was written (false: the newest held the same).
	Wrote bool
	// Bytes is the state's size as JSON, before sealing (the sealed
	// object adds a few dozen bytes).
	Bytes int
	// digest is what Version holds, for SaveAfter; empty when a save
	// left the name's versions to be listed again (a prune that failed).
	digest string
}

// encode is st as the plaintext of a version, within MaxBytes.
func (s *Store) encode(st State) ([]byte, error) {
	if s.o.Sealer == nil {
		return nil, ErrNoKey
	}
	st.Normalize()
	pt, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	if len(pt) > MaxBytes && len(st.Origins) > 0 {
		// The sign-in is in the cookies: keep them, drop the storage.
		st.Origins = nil
		if pt, err = json.Marshal(st); err != nil {
			return nil, err
		}
	}
	if len(pt) > MaxBytes {
		return nil, fmt.Errorf("state %q is %d bytes, over the %d a state may hold", st.Name, len(pt), MaxBytes)
	}
	return pt, nil
}

// Save writes st as the next version of st.Name, unless the newest version
// already holds the same state (a retried save writes nothing).
func (s *Store) Save(ctx context.Context, st State) (Saved, error) {
	pt, err := s.encode(st)
	if err != nil {
		return Saved{}, err
	}
	return s.save(ctx, st.Name, pt)
}

func (s *Store) save(ctx context.Context, name string, pt []byte) (Saved, error) {
	hash, digest := NameHash(name), s.o.Sealer.Digest(pt)
	for range 4 {
		vs, err := s.versions(ctx, hash)
		if err != nil {
			return Saved{}, err
		}
		var v int64
		if len(vs) > 0 {
			v = vs[len(vs)-1]
			if meta, err := s.meta(ctx, s.dir(hash)+VersionKey(v)); err == nil && evidence.MetaValue(meta, metaDigest) == digest {
				return Saved{Version: v, Bytes: len(pt), digest: digest}, nil
			}
		}
		err = s.write(ctx, hash, v+1, pt, digest)
		if err != nil {
			if conflict(err) {
				continue
			}
			return Saved{}, err
		}
		pruned := s.prune(ctx, hash, append(vs, v+1))
		return Saved{Version: v + 1, Wrote: true, Bytes: len(pt), digest: keepIf(pruned, digest)}, nil
	}
	return Saved{}, errors.New("writing a state version: other writers kept taking the next number")
}

// SaveAfter is Save for the writer whose last save of st.Name answered
// last: it knows the newest version and what it holds, so it writes the
// next one without listing the versions and reading the newest's digest
// (two S3 requests of the four a save takes), and writes nothing when st
// is what it last saved. Another writer that took the next number makes
// it a Save; so does a last save that did not write or keep the digest.
func (s *Store) SaveAfter(ctx context.Context, st State, last Saved) (Saved, error) {
	pt, err := s.encode(st)
	if err != nil {
		return Saved{}, err
	}
	if last.Version <= 0 || last.digest == "" {
		return s.save(ctx, st.Name, pt)
	}
	hash, digest := NameHash(st.Name), s.o.Sealer.Digest(pt)
	if digest == last.digest {
		return Saved{Version: last.Version, Bytes: len(pt), digest: digest}, nil
	}
	v := last.Version + 1
	if err := s.write(ctx, hash, v, pt, digest); err != nil {
		if conflict(err) {
			return s.save(ctx, st.Name, pt)
		}
		return Saved{}, err
	}
	pruned := true
	if old := v - int64(s.o.Keep); old > 0 {
		pruned = s.remove(ctx, s.dir(hash)+VersionKey(old)) == nil
	}
	return Saved{Version: v, Wrote: true, Bytes: len(pt), digest: keepIf(pruned, digest)}, nil
}

// write puts version v of hash, sealed, where no object is: a version is
// never overwritten (conflict tells a writer it lost the number).
func (s *Store) write(ctx context.Context, hash string, v int64, pt []byte, digest string) error {
	sealed, err := s.o.Sealer.Seal(aad(hash, v), pt)
	if err != nil {
		return err
	}
	if err := s.put(ctx, s.dir(hash)+VersionKey(v), "application/octet-stream", sealed, map[string]string{metaDigest: digest}, ""); err != nil {
		if conflict(err) {
			return err
		}
		return fmt.Errorf("writing state version %d: %w", v, err)
	}
	return nil
}

// keepIf is digest when the versions were pruned, else "": the next save
// lists them and prunes what this one could not.
func keepIf(pruned bool, digest string) string {
	if pruned {
		return digest
	}
	return ""
}

// prune deletes all but the newest Keep versions (best effort: a later
// save prunes what this one could not); false when one was left.
func (s *Store) prune(ctx context.Context, hash string, vs []int64) bool {
	ok := true
	for len(vs) > s.o.Keep {
		ok = s.remove(ctx, s.dir(hash)+VersionKey(vs[0])) == nil && ok
		vs = vs[1:]
	}
	return ok
}

// Info describes one stored state for operators.
type Info struct {
	// Hash is the name's hash (the key segment); Name is known only when
	// the newest version opens with this store's key.
	Hash     string    `json:"hash"`
	Name     string    `json:"name,omitempty"`
	Versions int       `json:"versions"`
	Newest   int64     `json:"newest"`
	Updated  time.Time `json:"updated"`
	// Holder is the session tag holding the lease, while it lasts.
	Holder     string    `json:"holder,omitempty"`
	HeldUntil  time.Time `json:"held_until,omitzero"`
	Unreadable bool      `json:"unreadable,omitempty"`
}

// List describes every stored state.
func (s *Store) List(ctx context.Context) ([]Info, error) {
	byHash := map[string]*Info{}
	var order []string
	objs, err := s.list(ctx, s.o.Prefix+"/")
	if err != nil {
		return nil, fmt.Errorf("listing states: %w", err)
	}
	for _, o := range objs {
		hash, rest, ok := strings.Cut(strings.TrimPrefix(o.key, s.o.Prefix+"/"), "/")
		if !ok || len(hash) != 64 {
			continue
		}
		in := byHash[hash]
		if in == nil {
			in = &Info{Hash: hash}
			byHash[hash] = in
			order = append(order, hash)
		}
		if v, ok := ParseVersion(rest); ok {
			in.Versions++
			if v > in.Newest {
				in.Newest, in.Updated = v, o.modified
			}
		}
	}
	var out []Info
	for _, hash := range order {
		in := byHash[hash]
		if in.Newest > 0 {
			if st, err := s.read(ctx, "", hash, in.Newest); err == nil {
				in.Name = st.Name
			} else if !errors.Is(err, ErrNoKey) {
				in.Unreadable = true
			}
		}
		if l, _, err := s.lease(ctx, hash); err == nil && l.Owner != "" && l.Until.After(s.o.Now()) {
			in.Holder, in.HeldUntil = l.Owner, l.Until
		}
		out = append(out, *in)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name+a.Hash, b.Name+b.Hash) })
	return out, nil
}

// Delete removes every version and the lease of the state with this name
// (or this hash, as List shows it). It answers how many objects went.
func (s *Store) Delete(ctx context.Context, nameOrHash string) (int, error) {
	hash := nameOrHash
	if !isHash(hash) {
		if err := ValidName(nameOrHash); err != nil {
			return 0, err
		}
		hash = NameHash(nameOrHash)
	}
	objs, err := s.list(ctx, s.dir(hash))
	if err != nil {
		return 0, fmt.Errorf("listing the state's objects: %w", err)
	}
	for n, o := range objs {
		if err := s.remove(ctx, o.key); err != nil {
			return n, fmt.Errorf("deleting %s: %w", o.key, err)
		}
	}
	return len(objs), nil
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
