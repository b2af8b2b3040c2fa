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
	if v := s.env(EnvName(name)); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			s.errs = append(s.errs, &Error{Flag: name, Problem: fmt.Sprintf("%q is not a boolean", v), Fix: "use true or false"})
		} else {
			def = b
		}
	}
	s.BoolVar(p, name, def, s.usage(name, usage))
}

// Int defines an int flag.
func (s *Set) Int(p *int, name string, def int, usage string) {
	if v := s.env(EnvName(name)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			s.errs = append(s.errs, &Error{Flag: name, Problem: fmt.Sprintf("%q is not a whole number", v)})
		} else {
			def = n
		}
	}
	s.IntVar(p, name, def, s.usage(name, usage))
}

// Duration defines a duration flag.
func (s *Set) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	if v := s.env(EnvName(name)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			s.errs = append(s.errs, &Error{Flag: name, Problem: fmt.Sprintf("%q is not a duration", v), Fix: "use a number with a unit, e.g. 90s or 3m"})
		} else {
			def = d
		}
	}
	s.DurationVar(p, name, def, s.usage(name, usage))
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
