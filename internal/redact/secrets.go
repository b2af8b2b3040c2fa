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

// SecretSource resolves a secret by its upper-case NAME.
type SecretSource interface {
	// Lookup returns the secret's value and whether it is set.
	Lookup(name string) (string, bool)
}

// EnvSource reads secrets from the worker's environment, from
// EnvPrefix + NAME.
type EnvSource struct{}

// Lookup implements SecretSource.
func (EnvSource) Lookup(name string) (string, bool) {
	return os.LookupEnv(EnvPrefix + strings.ToUpper(name))
}

// FileSource holds secrets read from a file of NAME=value lines.
//
// Format: one NAME=value a line. NAME is matched case-insensitively (stored
// upper-case) and must match [A-Za-z0-9_]+. The value is everything after the
// first '=', verbatim: no quotes are stripped and no escapes interpreted (only
// a trailing "\r" is dropped). Blank lines and lines starting with '#' are
// skipped; a leading "export " is allowed so a shell env file can be reused.
type FileSource struct {
	values map[string]string
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
	fs := &FileSource{values: map[string]string{}}
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
		fs.values[strings.ToUpper(name)] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("redact: reading secrets file: %w", err)
	}
	return fs, nil
}

// Lookup implements SecretSource.
func (f *FileSource) Lookup(name string) (string, bool) {
	if f == nil {
		return "", false
	}
	v, ok := f.values[strings.ToUpper(name)]
	return v, ok
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

// Lookup implements SecretSource.
func (c Chain) Lookup(name string) (string, bool) {
	for _, s := range c {
		if s == nil {
			continue
		}
		if v, ok := s.Lookup(name); ok {
			return v, true
		}
	}
	return "", false
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

// BadSecretNameError says a {{secret:...}} placeholder's name is not made of
// letters, digits and underscores. The name itself is not repeated: it may be
// a value someone pasted by mistake.
type BadSecretNameError struct{}

func (e *BadSecretNameError) Error() string {
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

// ExpandSecrets replaces every {{secret:NAME}} in s with the value src holds
// for NAME (upper-cased) and registers each resolved value with r (when r is
// not nil) so it is redacted everywhere afterwards. An unknown name is an
// *UnknownSecretError naming the environment variable to set; a malformed
// name is a *BadSecretNameError. On error the returned string is empty.
// Values shorter than MinLen are resolved but cannot be redacted.
func ExpandSecrets(s string, src SecretSource, r *Redactor) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var firstErr error
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
		var (
			v  string
			ok bool
		)
		if src != nil {
			v, ok = src.Lookup(name)
		}
		if !ok {
			firstErr = &UnknownSecretError{Name: name, EnvVar: EnvPrefix + name}
			return ""
		}
		r.Register(v)
		return v
	})
	if firstErr != nil {
		return "", firstErr
	}
	return out, nil
}
