// Package config holds the command line's settings: flags that each have an
// environment equivalent (DURABLE_BROWSER_<FLAG>), and their validation.
package config

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// EnvPrefix starts every environment equivalent of a flag.
const EnvPrefix = "DURABLE_BROWSER_"

// EnvName is the environment variable for a flag: --s3-bucket is DURABLE_BROWSER_S3_BUCKET.
func EnvName(flagName string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Error is a refused setting: which flag, what is wrong, and the fix.
type Error struct {
	Flag    string
	Problem string
	Fix     string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("--%s (%s): %s", e.Flag, EnvName(e.Flag), e.Problem)
	if len(e.Flag) == 1 {
		// A one-letter flag (-o) is the command line's only: no variable.
		s = fmt.Sprintf("-%s: %s", e.Flag, e.Problem)
	}
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Set is a flag set whose defaults come from the environment.
type Set struct {
	*flag.FlagSet
	env  func(string) string
	errs []error
}

// NewSet returns a set; env is os.Getenv when nil.
func NewSet(name string, env func(string) string) *Set {
	if env == nil {
		env = os.Getenv
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return &Set{FlagSet: fs, env: env}
}

func (s *Set) usage(name, usage string) string {
	return fmt.Sprintf("%s [$%s]", usage, EnvName(name))
}

// String defines a string flag.
func (s *Set) String(p *string, name, def, usage string) {
	if v := s.env(EnvName(name)); v != "" {
		def = v
	}
	s.StringVar(p, name, def, s.usage(name, usage))
}

// Bool defines a bool flag.
func (s *Set) Bool(p *bool, name string, def bool, usage string) {
	s.BoolVar(p, name, fromEnv(s, name, def, strconv.ParseBool, "is not a boolean", "use true or false"), s.usage(name, usage))
}

// Int defines an int flag.
func (s *Set) Int(p *int, name string, def int, usage string) {
	s.IntVar(p, name, fromEnv(s, name, def, strconv.Atoi, "is not a whole number", ""), s.usage(name, usage))
}

// Duration defines a duration flag.
func (s *Set) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	s.DurationVar(p, name, fromEnv(s, name, def, time.ParseDuration, "is not a duration", "use a number with a unit, e.g. 90s or 3m"), s.usage(name, usage))
}

// fromEnv is the default of flag name: its environment variable's value
// when set and parse takes it, else def. A value parse refuses is kept as
// the error Parse answers: the value, then problem, with fix.
func fromEnv[T any](s *Set, name string, def T, parse func(string) (T, error), problem, fix string) T {
	v := s.env(EnvName(name))
	if v == "" {
		return def
	}
	got, err := parse(v)
	if err != nil {
		s.errs = append(s.errs, &Error{Flag: name, Problem: fmt.Sprintf("%q %s", v, problem), Fix: fix})
		return def
	}
	return got
}

// Parse parses args, reporting environment values that did not parse first.
func (s *Set) Parse(args []string) error {
	if len(s.errs) > 0 {
		return s.errs[0]
	}
	return s.FlagSet.Parse(args)
}

// Names lists the set's flags, sorted.
func (s *Set) Names() []string {
	var out []string
	s.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
	sort.Strings(out)
	return out
}

// ErrFlagAfterArgs is a flag given after the positional arguments of a
// verb whose flags go first.
type ErrFlagAfterArgs struct {
	Flag, Synopsis string
}

func (e *ErrFlagAfterArgs) Error() string {
	return fmt.Sprintf("%s comes after the positional arguments; flags go first: %s", e.Flag, e.Synopsis)
}

// ParseFlagsFirst parses args for a verb whose flags stand before its
// positional arguments, and refuses, in one line naming synopsis, a flag
// of this set given after them (the flag package would take it for a
// positional argument).
func (s *Set) ParseFlagsFirst(args []string, synopsis string) error {
	if err := s.Parse(args); err != nil {
		return err
	}
	for _, a := range s.Args() {
		if a == "--" || !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if s.Lookup(name) != nil {
			return &ErrFlagAfterArgs{Flag: a, Synopsis: synopsis}
		}
	}
	return nil
}

// Given reports whether the flag was set on the command line or through
// its environment variable, rather than left at its default.
func (s *Set) Given(name string) bool {
	given := s.env(EnvName(name)) != ""
	s.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}
