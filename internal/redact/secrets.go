package redact

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// EnvPrefix is prepended to a secret's NAME to form the environment variable
// EnvSource reads: {{secret:GITHUB_PASSWORD}} reads
// DURABLE_BROWSER_SECRET_GITHUB_PASSWORD.
const EnvPrefix = "DURABLE_BROWSER_SECRET_"

// OriginsSuffix ends the name of the variable (or secrets file line) that
// lists the origins a secret belongs to: DURABLE_BROWSER_SECRET_PW_ORIGINS
// for the secret PW. A NAME ending in it is never a secret itself.
const OriginsSuffix = "_ORIGINS"

// Secret is one secret a SecretSource holds.
type Secret struct {
	// Name is the secret's upper-case NAME.
	Name string
	// Value is what {{secret:NAME}} stands for.
	Value string
	// Origins are the normalised origins (scheme://host[:port]) the value
	// may be typed into and sent to. Empty: none declared, so the secret
	// cannot be typed anywhere.
	Origins []string
	// OriginsErr says the origins list is malformed (without repeating it).
	OriginsErr error
}

// Bound reports whether origin (as OriginOf spells it) is one of s's.
func (s Secret) Bound(origin string) bool {
	for _, o := range s.Origins {
		if o == origin {
			return true
		}
	}
	return false
}

// SecretSource resolves a secret by its upper-case NAME.
type SecretSource interface {
	// Lookup returns the secret, its origins from the same source, and
	// whether it is set.
	Lookup(name string) (Secret, bool)
}

// EnvSource reads secrets from the worker's environment, from
// EnvPrefix + NAME, and their origins from EnvPrefix + NAME + OriginsSuffix.
type EnvSource struct{}

// Lookup implements SecretSource.
func (EnvSource) Lookup(name string) (Secret, bool) {
	name = strings.ToUpper(name)
	if strings.HasSuffix(name, OriginsSuffix) {
		return Secret{}, false
	}
	v, ok := os.LookupEnv(EnvPrefix + name)
	if !ok {
		return Secret{}, false
	}
	s := Secret{Name: name, Value: v}
	if list, ok := os.LookupEnv(EnvPrefix + name + OriginsSuffix); ok {
		s.Origins, s.OriginsErr = ParseOrigins(list)
	}
	return s, true
}

// CheckEnv validates every DURABLE_BROWSER_SECRET_<NAME>_ORIGINS in environ
// (os.Environ()): each must parse and belong to a secret that is set. The
// error names the variable, never a value.
func CheckEnv(environ []string) error {
	set := map[string]bool{}
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok {
			set[k] = true
		}
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvPrefix) || !strings.HasSuffix(k, OriginsSuffix) {
			continue
		}
		if _, err := ParseOrigins(v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if !set[strings.TrimSuffix(k, OriginsSuffix)] {
			return fmt.Errorf("%s is set but %s is not: origins without a secret", k, strings.TrimSuffix(k, OriginsSuffix))
		}
	}
	return nil
}

// FileSource holds secrets read from a file of NAME=value lines.
//
// Format: one NAME=value a line. NAME is matched case-insensitively (stored
// upper-case) and must match [A-Za-z0-9_]+. The value is everything after the
// first '=', verbatim: no quotes are stripped and no escapes interpreted (only
// a trailing "\r" is dropped). Blank lines and lines starting with '#' are
// skipped; a leading "export " is allowed so a shell env file can be reused.
//
// A line NAME_ORIGINS=https://a.example,https://b.example lists the origins
// the secret NAME belongs to (see ParseOrigins); it must follow a NAME line
// or precede one, and a malformed list or one without its secret stops the
// parse.
type FileSource struct {
	values  map[string]string
	origins map[string][]string
}

// LoadFileSource reads path. Errors name the line number, never its content.
func LoadFileSource(path string) (*FileSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("redact: reading secrets file: %w", err)
	}
	return ParseFileSource(b)
}

// ParseFileSource parses the FileSource format from b.
func ParseFileSource(b []byte) (*FileSource, error) {
	fs := &FileSource{values: map[string]string{}, origins: map[string][]string{}}
	originLine := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		line = strings.TrimLeft(line, " \t")
		line = strings.TrimPrefix(line, "export ")
		name, val, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || !nameRE.MatchString(name) {
			return nil, fmt.Errorf("redact: secrets file line %d: want NAME=value with NAME of letters, digits and _", n)
		}
		name = strings.ToUpper(name)
		if strings.HasSuffix(name, OriginsSuffix) {
			o, err := ParseOrigins(val)
			if err != nil {
				return nil, fmt.Errorf("redact: secrets file line %d: %w", n, err)
			}
			base := strings.TrimSuffix(name, OriginsSuffix)
			fs.origins[base] = o
			originLine[base] = n
			continue
		}
		fs.values[name] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("redact: reading secrets file: %w", err)
	}
	for base, n := range originLine {
		if _, ok := fs.values[base]; !ok {
			return nil, fmt.Errorf("redact: secrets file line %d: %s%s without a %s line: origins without a secret", n, base, OriginsSuffix, base)
		}
	}
	return fs, nil
}

// Lookup implements SecretSource.
func (f *FileSource) Lookup(name string) (Secret, bool) {
	if f == nil {
		return Secret{}, false
	}
	name = strings.ToUpper(name)
	v, ok := f.values[name]
	if !ok {
		return Secret{}, false
	}
	return Secret{Name: name, Value: v, Origins: f.origins[name]}, true
}

// Names lists the secret names the file defines (never their values).
func (f *FileSource) Names() []string {
	if f == nil {
		return nil
	}
	out := make([]string, 0, len(f.values))
	for k := range f.values {
		out = append(out, k)
	}
	return out
}

// Chain is a SecretSource that asks each source in order; the first that has
// the name wins. Nil sources are skipped.
type Chain []SecretSource

// Lookup implements SecretSource. The origins come from the source that
// has the value.
func (c Chain) Lookup(name string) (Secret, bool) {
	for _, s := range c {
		if s == nil {
			continue
		}
		if v, ok := s.Lookup(name); ok {
			return v, true
		}
	}
	return Secret{}, false
}

// ErrUnknownSecret is matched (errors.Is) by every *UnknownSecretError.
var ErrUnknownSecret = errors.New("redact: unknown secret")

// ErrBadSecretName is matched (errors.Is) by every *BadSecretNameError.
var ErrBadSecretName = errors.New("redact: malformed secret placeholder")

// UnknownSecretError says a {{secret:NAME}} placeholder named a secret the
// worker does not have.
type UnknownSecretError struct {
	// Name is the secret's upper-case name.
	Name string
	// EnvVar is the environment variable that would define it.
	EnvVar string
}

func (e *UnknownSecretError) Error() string {
	return fmt.Sprintf("secret %s is not set on the worker: set %s in the worker's environment (or add %s=... to its secrets file)", e.Name, e.EnvVar, e.Name)
}

// Is makes errors.Is(err, ErrUnknownSecret) true.
func (e *UnknownSecretError) Is(target error) bool { return target == ErrUnknownSecret }

// ErrUnboundSecret is matched (errors.Is) by every *UnboundSecretError.
var ErrUnboundSecret = errors.New("redact: secret without origins")

// UnboundSecretError says a secret has no usable origins list, so it may
// not be typed anywhere.
type UnboundSecretError struct {
	// Name is the secret's upper-case name.
	Name string
	// EnvVar is the variable that lists its origins.
	EnvVar string
	// Err is set when the list is there but malformed.
	Err error
}

func (e *UnboundSecretError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("secret %s has a malformed origins list in %s: %v; it is typed only into pages of the origins listed there", e.Name, e.EnvVar, e.Err)
	}
	return fmt.Sprintf("secret %s has no origins, so it may not be typed anywhere: set %s=https://site.example (comma-separated origins it belongs to) in the worker's environment, or %s%s=... in its secrets file", e.Name, e.EnvVar, e.Name, OriginsSuffix)
}

// Is makes errors.Is(err, ErrUnboundSecret) true.
func (e *UnboundSecretError) Is(target error) bool { return target == ErrUnboundSecret }

// BadSecretNameError says a {{secret:...}} placeholder's name is not made of
// letters, digits and underscores. The name itself is not repeated: it may be
// a value someone pasted by mistake.
type BadSecretNameError struct {
	// Origins says the name ends in OriginsSuffix, which names a
	// secret's origins, not a secret.
	Origins bool
}

func (e *BadSecretNameError) Error() string {
	if e.Origins {
		return "{{secret:NAME}} placeholder names an origins list: a NAME ending in " + OriginsSuffix + " lists the origins of the secret NAME, and is not itself a secret"
	}
	return "malformed {{secret:NAME}} placeholder: NAME must be letters, digits and _ (for example {{secret:GITHUB_PASSWORD}})"
}

// Is makes errors.Is(err, ErrBadSecretName) true.
func (e *BadSecretNameError) Is(target error) bool { return target == ErrBadSecretName }

var (
	nameRE        = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	placeholderRE = regexp.MustCompile(`\{\{\s*secret:([^{}]*?)\s*\}\}`)
)

// HasSecrets reports whether s holds a {{secret:...}} placeholder.
func HasSecrets(s string) bool { return placeholderRE.MatchString(s) }

// Secrets are a worker's secrets: Source resolves {{secret:NAME}}, and
// each value resolved is registered with Redactor, so it is redacted
// everywhere from then on. A nil *Secrets resolves nothing.
type Secrets struct {
	Source   SecretSource
	Redactor *Redactor
}

// Lookup implements SecretSource: the source's secret, registered with no
// redactor (a worker registers all it has at start).
func (x *Secrets) Lookup(name string) (Secret, bool) {
	if x == nil || x.Source == nil {
		return Secret{}, false
	}
	return x.Source.Lookup(name)
}

// Expand replaces every {{secret:NAME}} in s with the value the source holds
// for NAME (upper-cased), registers each resolved value with the redactor
// (when there is one), and returns the secrets it used (each once) with
// their origins. An unknown name is an *UnknownSecretError naming the
// environment variable to set; a malformed name is a *BadSecretNameError; a
// secret with no origins (or a malformed list) is an *UnboundSecretError
// naming the origins variable, since it may not be typed anywhere. On error
// the returned string is empty. Values shorter than MinLen are resolved but
// cannot be redacted.
func (x *Secrets) Expand(s string) (string, []Secret, error) {
	var r *Redactor
	if x != nil {
		r = x.Redactor
	}
	if !strings.Contains(s, "{{") {
		return s, nil, nil
	}
	var firstErr error
	var used []Secret
	out := placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		if firstErr != nil {
			return ""
		}
		name := strings.TrimSpace(placeholderRE.FindStringSubmatch(m)[1])
		if !nameRE.MatchString(name) {
			firstErr = &BadSecretNameError{}
			return ""
		}
		name = strings.ToUpper(name)
		if strings.HasSuffix(name, OriginsSuffix) {
			firstErr = &BadSecretNameError{Origins: true}
			return ""
		}
		sec, ok := x.Lookup(name)
		if !ok {
			firstErr = &UnknownSecretError{Name: name, EnvVar: EnvPrefix + name}
			return ""
		}
		sec.Name = name
		if sec.OriginsErr != nil || len(sec.Origins) == 0 {
			firstErr = &UnboundSecretError{Name: name, EnvVar: EnvPrefix + name + OriginsSuffix, Err: sec.OriginsErr}
			return ""
		}
		r.Register(sec.Value)
		seen := false
		for _, u := range used {
			seen = seen || u.Name == name
		}
		if !seen {
			used = append(used, sec)
		}
		return sec.Value
	})
	if firstErr != nil {
		return "", nil, firstErr
	}
	return out, used, nil
}
