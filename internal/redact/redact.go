// Package redact keeps secrets out of everything that leaves an activity:
// results, failures, log lines and evidence. A Redactor replaces registered
// values (in their raw and common encoded spellings) and well-known credential
// shapes with the literal Placeholder, scrubs page URLs, and resolves
// {{secret:NAME}} placeholders from the worker's own secret source.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/durable-browser/durable-browser/internal/scrub"
)

// Placeholder is what every redacted value becomes. It is the text scrub.URL
// puts in place of query values, so a URL scrubbed by either has one form.
const Placeholder = scrub.Redacted

// MinLen is the shortest value (in characters) Register accepts. Shorter
// values would match ordinary text and are ignored.
const MinLen = 8

// maxPasses bounds the replace-until-stable loop in String. A replacement can
// in principle assemble a new occurrence of a registered value out of the
// placeholder and its neighbours; looping removes those, and the bound keeps
// an adversarial value from looping forever.
const maxPasses = 4

// Redactor replaces registered values and known credential shapes with
// Placeholder. It is safe for concurrent use. A nil *Redactor redacts known
// shapes only.
type Redactor struct {
	mu       sync.RWMutex
	values   map[string]struct{} // registered raw values
	spelling map[string]struct{} // every spelling searched for
	repl     *strings.Replacer   // built lazily from spelling; nil when stale
	keys     []string            // spelling's keys, longest first, with repl
	bytes    *byteSet            // the bytes keys are made of, with repl
}

// New returns an empty Redactor.
func New() *Redactor {
	return &Redactor{values: map[string]struct{}{}, spelling: map[string]struct{}{}}
}

// Register adds values to redact from now on. Values shorter than MinLen
// characters are ignored. Each value is searched for raw, URL-encoded (query
// and path spellings), JSON-escaped (as Go's encoding/json and as
// JavaScript's JSON.stringify write it), HTML-escaped (as Chrome's
// serializer writes a text node and an attribute value, as Go's
// html.EscapeString and as Python's html.escape write it), base64 (standard
// and URL alphabets, with and without padding) and lower-case hex; and in
// text holding HTML character references, decoded: any of those spellings
// with any of its characters written as a named, decimal or hex reference
// (htmlDecoded) is redacted whole.
func (r *Redactor) Register(values ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if utf8.RuneCountInString(v) < MinLen {
			continue
		}
		if _, ok := r.values[v]; ok {
			continue
		}
		r.values[v] = struct{}{}
		for _, s := range spellings(v) {
			if len(s) >= MinLen {
				r.spelling[s] = struct{}{}
			}
		}
		r.repl = nil
	}
}

// Len reports how many distinct values are registered.
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.values)
}

// spellings lists the forms in which v can reach text we emit. Most are v
// itself when v has none of the characters they escape.
func spellings(v string) []string {
	b := []byte(v)
	out := []string{
		v,
		url.QueryEscape(v),
		url.PathEscape(v),
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		hex.EncodeToString(b),
		jsString(v),
		htmlText(v),
		htmlAttr(v),
		html.EscapeString(v),
		htmlQuoted(v),
	}
	if j, err := json.Marshal(v); err == nil && len(j) >= 2 {
		out = append(out, string(j[1:len(j)-1]))
	}
	return out
}

// replacer returns the cached replacer and the spellings it replaces,
// building them if needed. Longer spellings come first so that, where two
// overlap at one position, the longer one wins.
func (r *Redactor) replacer() (*strings.Replacer, []string, *byteSet) {
	r.mu.RLock()
	rep, keys, set := r.repl, r.keys, r.bytes
	n := len(r.spelling)
	r.mu.RUnlock()
	if rep != nil || n == 0 {
		return rep, keys, set
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.repl != nil {
		return r.repl, r.keys, r.bytes
	}
	keys = make([]string, 0, len(r.spelling))
	for s := range r.spelling {
		keys = append(keys, s)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	pairs := make([]string, 0, 2*len(keys))
	set = &byteSet{}
	for _, k := range keys {
		pairs = append(pairs, k, Placeholder)
		set.add(k)
	}
	r.repl, r.keys, r.bytes = strings.NewReplacer(pairs...), keys, set
	return r.repl, r.keys, r.bytes
}

// containsSpelling reports whether s still holds any registered spelling,
// as it is or with its character references decoded.
func (r *Redactor) containsSpelling(s string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	dec, _ := htmlDecoded(s, nil, false, nil)
	for sp := range r.spelling {
		if strings.Contains(s, sp) || strings.Contains(dec, sp) {
			return true
		}
	}
	return false
}

// references replaces, in s, every stretch that holds a registered
// spelling once its character references are decoded (htmlDecoded): a
// value a page or serializer wrote with some characters as references
// (Chrome writes & < > as &amp; &lt; &gt; in text, & " as &amp; &quot; in
// attributes; others write &#39;, &#x27;, &#60;, or every character as a
// number). A reference any part of the spelling came from is replaced
// whole. rep and keys are the redactor's replacer and spellings, set the
// bytes they are made of: only references that stand for one of those are
// decoded (the rest can be part of no spelling), rep finds whether there
// is anything to replace (most text holds no such reference, and most that
// does holds no secret), keys where.
func references(s string, rep *strings.Replacer, keys []string, set *byteSet) string {
	dec, refs := htmlDecoded(s, set, true, nil)
	if len(refs) == 0 || !replaces(rep, dec) {
		return s
	}
	type span struct{ a, e int }
	var spans []span
	for _, k := range keys {
		for off := 0; ; {
			i := strings.Index(dec[off:], k)
			if i < 0 {
				break
			}
			a, e := sourceSpan(refs, off+i, off+i+len(k))
			spans = append(spans, span{a, e})
			off += i + len(k)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].a < spans[j].a })
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(spans); {
		a, e := spans[i].a, spans[i].e
		for i++; i < len(spans) && spans[i].a < e; i++ {
			e = max(e, spans[i].e)
		}
		b.WriteString(s[last:a])
		b.WriteString(Placeholder)
		last = e
	}
	b.WriteString(s[last:])
	return b.String()
}

// replaces says whether rep would change s, without making the copy
// Replace would.
func replaces(rep *strings.Replacer, s string) bool {
	w := &sameWriter{s: s}
	_, _ = rep.WriteString(w, s)
	return w.differs || w.off != len(s)
}

// sameWriter compares what is written to it with s, and fails the write at
// the first difference (which stops Replacer.WriteString).
type sameWriter struct {
	s       string
	off     int
	differs bool
}

var errDiffers = errors.New("differs")

func (w *sameWriter) WriteString(p string) (int, error) {
	if w.differs || len(p) > len(w.s)-w.off || w.s[w.off:w.off+len(p)] != p {
		w.differs = true
		return 0, errDiffers
	}
	w.off += len(p)
	return len(p), nil
}

func (w *sameWriter) Write(p []byte) (int, error) { return w.WriteString(string(p)) }

// credentialParams are parameter names whose values are credentials
// wherever name=value appears (after a separator, whitespace or a quote).
// Matched case-insensitively.
var credentialParams = []string{
	"access_token", "refresh_token", "id_token", "token", "auth_token", "authtoken",
	"api_key", "api-key", "apikey", "secret", "client_secret",
	"password", "passwd", "signature", "signingkey", "sessionid", "session_id", "jwt",
	"x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature",
}

// queryOnlyParams are credential names too generic to match in prose ("exit
// code=1", "primary key=id"); they are redacted only inside a query or form
// string, after '?', '&' or ';'.
var queryOnlyParams = []string{"key", "sig", "auth", "code", "session"}

var (
	// name=value where name is a credential parameter.
	paramRE      = regexp.MustCompile(`(?i)(^|[?&;\s"'(<,])(` + alternation(credentialParams) + `)=([^&;\s#"'<>,)]+)`)
	queryParamRE = regexp.MustCompile(`(?i)([?&;])(` + alternation(queryOnlyParams) + `)=([^&;\s#"'<>,)]+)`)
	// Credential shapes. Each keeps its recognisable prefix where that helps a
	// reader know what was there.
	skRE     = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`)
	bbRE     = regexp.MustCompile(`\bbb_(?:live|test)_[A-Za-z0-9_-]{8,}`)
	aizaRE   = regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`)
	bearerRE = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9\-._~+/]{8,}=*`)
	jwtRE    = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+`)
	// scheme://user:password@ in free text.
	userinfoRE = regexp.MustCompile(`(?i)([a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@`)
)

func alternation(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	// Longest first so "token" does not shadow "access_token" and the like.
	sort.Slice(q, func(i, j int) bool { return len(q[i]) > len(q[j]) })
	return strings.Join(q, "|")
}

// shapes replaces known credential shapes. Each pattern runs only when the
// text holds the literal it cannot match without: most text (a snapshot, a
// page read) holds none, and the patterns are the costly part of redaction.
func shapes(s string) string {
	lower := strings.ToLower(s)
	if strings.Contains(s, "=") && containsAny(lower, credentialParams) {
		s = paramRE.ReplaceAllString(s, "${1}${2}="+Placeholder)
	}
	if strings.ContainsAny(s, "?&;") && containsAny(lower, queryOnlyParams) {
		s = queryParamRE.ReplaceAllString(s, "${1}${2}="+Placeholder)
	}
	if strings.Contains(s, "eyJ") {
		s = jwtRE.ReplaceAllString(s, Placeholder)
	}
	if strings.Contains(s, "sk-") {
		s = skRE.ReplaceAllString(s, Placeholder)
	}
	if strings.Contains(s, "bb_") {
		s = bbRE.ReplaceAllString(s, Placeholder)
	}
	if strings.Contains(s, "AIza") {
		s = aizaRE.ReplaceAllString(s, Placeholder)
	}
	if strings.Contains(lower, "bearer") {
		s = bearerRE.ReplaceAllString(s, "${1}${2}"+Placeholder)
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = userinfoRE.ReplaceAllString(s, "${1}"+Placeholder+"@")
	}
	return s
}

// containsAny reports whether lower holds any of the (lower-case) names.
func containsAny(lower string, names []string) bool {
	for _, n := range names {
		if strings.Contains(lower, n) {
			return true
		}
	}
	return false
}

// String returns s with every registered value and known credential shape
// replaced by Placeholder.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	var rep *strings.Replacer
	var keys []string
	var set *byteSet
	if r != nil {
		rep, keys, set = r.replacer()
	}
	for range maxPasses {
		next := s
		if rep != nil {
			next = rep.Replace(next)
			next = references(next, rep, keys, set)
		}
		next = shapes(next)
		if next == s {
			return s
		}
		s = next
	}
	// Still changing after maxPasses: only an adversarial registered value
	// does this. Never let it through.
	if rep != nil && r.containsSpelling(s) {
		return Placeholder
	}
	return s
}

// Bytes is String for byte slices. It returns a new slice when anything
// changed, else b itself.
func (r *Redactor) Bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	out := r.String(string(b))
	if out == string(b) {
		return b
	}
	return []byte(out)
}

// URL scrubs a page URL for showing or filing with scrub.URL (the userinfo
// and the fragment are dropped, every query value becomes Placeholder, the
// names stay) and then passes the result through String, so registered values
// and credential shapes in the scheme, host or path are redacted too.
func (r *Redactor) URL(raw string) string {
	return r.String(scrub.URL(raw))
}

// JSON returns raw with every string in it (object keys included) passed
// through String, and the string value of a credential-named key (password,
// secret, api_key, access_token, authorization...) replaced whole, keeping
// the document's order and shape. Text that is not
// valid JSON is redacted as plain text.
func (r *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := r.jsonValue(dec, &out); err != nil {
		return json.RawMessage(r.Bytes(raw))
	}
	// Trailing garbage means raw was not one JSON value.
	if _, err := dec.Token(); err == nil {
		return json.RawMessage(r.Bytes(raw))
	}
	return json.RawMessage(out.Bytes())
}

// credentialKeys are JSON object keys whose string values are credentials
// whatever they look like. Kept narrow: ids such as "session_id" stay.
var credentialKeys = map[string]bool{
	"password": true, "passwd": true, "secret": true, "client_secret": true,
	"api_key": true, "apikey": true, "access_token": true, "refresh_token": true,
	"id_token": true, "authorization": true, "x-api-key": true,
}

// jsonCredential writes the value under a credential key: a string becomes
// Placeholder, anything else is redacted as usual.
func (r *Redactor) jsonCredential(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if s, ok := tok.(string); ok && s != "" {
		writeJSONString(out, Placeholder)
		return nil
	}
	return r.jsonToken(dec, tok, out)
}

type jsonSyntaxError struct{}

func (jsonSyntaxError) Error() string { return "redact: malformed JSON" }

func (r *Redactor) jsonValue(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return r.jsonToken(dec, tok, out)
}

func (r *Redactor) jsonToken(dec *json.Decoder, tok json.Token, out *bytes.Buffer) error {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			out.WriteByte('{')
			for first := true; dec.More(); first = false {
				if !first {
					out.WriteByte(',')
				}
				k, err := dec.Token()
				if err != nil {
					return err
				}
				ks, ok := k.(string)
				if !ok {
					return jsonSyntaxError{}
				}
				writeJSONString(out, r.String(ks))
				out.WriteByte(':')
				if credentialKeys[strings.ToLower(ks)] {
					if err := r.jsonCredential(dec, out); err != nil {
						return err
					}
					continue
				}
				if err := r.jsonValue(dec, out); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // '}'
				return err
			}
			out.WriteByte('}')
		case '[':
			out.WriteByte('[')
			for first := true; dec.More(); first = false {
				if !first {
					out.WriteByte(',')
				}
				if err := r.jsonValue(dec, out); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			out.WriteByte(']')
		default:
			return jsonSyntaxError{}
		}
	case string:
		writeJSONString(out, r.String(t))
	case json.Number:
		// A registered value can be all digits (a card number): a number
		// holding one becomes the redacted string.
		if red := r.String(t.String()); red != t.String() {
			writeJSONString(out, red)
		} else {
			out.WriteString(t.String())
		}
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	default:
		return jsonSyntaxError{}
	}
	return nil
}

func writeJSONString(out *bytes.Buffer, s string) {
	// Redaction can cut a multi-byte character (a value ending in part of
	// one): Marshal would spell the stray bytes as the escape \ufffd, which
	// reads back as U+FFFD and is written raw the next time, so a second
	// pass would change the output. Replaced here, both passes write U+FFFD.
	b, _ := json.Marshal(strings.ToValidUTF8(s, "\uFFFD")) // a string always marshals
	out.Write(b)
}
