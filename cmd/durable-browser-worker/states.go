package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/oneline"
	"github.com/durable-browser/durable-browser/internal/states"
)

const statesUsage = `Usage: durable-browser states list [flags]
       durable-browser states delete [flags] NAME|HASH

Verbs:
  list     the named states in the bucket: name (when DURABLE_BROWSER_STATE_KEY
           opens them), versions, last save, the session holding each, and
           the first 16 characters of its hash (--json: the whole hash)
  delete   remove every version of a state and its lease: by NAME, by its
           HASH, or by the 16-character hash list shows when no other
           state's hash begins the same

See docs/states.md.
`

func runStates(ctx context.Context, env *cliEnv, args []string) error {
	verb := func(name string) cli.Verb {
		return func(ctx context.Context, env *cliEnv, args []string) error {
			return runStatesVerb(ctx, env, name, args)
		}
	}
	return cli.Subverbs(ctx, env, args, "states", statesUsage, "`durable-browser states list` or `durable-browser states delete NAME`",
		map[string]cli.Verb{"list": verb("list"), "delete": verb("delete")})
}

func runStatesVerb(ctx context.Context, env *cliEnv, verb string, args []string) error {
	fs := cli.Flags("states "+verb, env, statesUsage+`
With no bucket named it reads the local `+"`durable-browser dev`"+` stack's S3, as
`+"`evidence get`"+` does. Credentials come from the standard AWS environment.

Flags:
`)
	var c config.S3
	config.BindS3(fs, &c)
	var prefix string
	var asJSON bool
	timeout := 2 * time.Minute
	fs.String(&prefix, "state-prefix", "states", "key prefix of named states in the bucket (the worker's --state-prefix)")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	fs.Duration(&timeout, "timeout", timeout, "give up after this long")
	var arg string
	if verb == "delete" {
		a, err := parseInterspersed(fs, args, "NAME or HASH")
		if err != nil {
			return err
		}
		arg = a
	} else if err := fs.Parse(args); err != nil {
		return err
	} else if fs.NArg() > 0 {
		return fmt.Errorf("states list takes no argument (got %q)", fs.Arg(0))
	}
	dev := c.Bucket == ""
	if dev {
		devDefaults(&c, fs)
	}
	if err := config.ValidateS3(c); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ev, err := openS3(ctx, env, c, "", dev, "manage states in")
	if err != nil {
		return err
	}
	so := states.Options{Client: ev.Client(), Bucket: c.Bucket, Prefix: prefix}
	k := env.Getenv(states.EnvKey)
	if k == "" && dev {
		// dev keeps the key it made in its state directory (default
		// .durable-browser, beside where it was started).
		if b, err := os.ReadFile(filepath.Join(".durable-browser", "state.key")); err == nil {
			k = strings.TrimSpace(string(b))
		}
	}
	if k != "" {
		raw, err := states.ParseKey(k)
		if err != nil {
			return err
		}
		if so.Sealer, err = states.NewSealer(raw); err != nil {
			return err
		}
	}
	store, err := states.New(so)
	if err != nil {
		return err
	}
	if verb == "delete" {
		target, err := resolveState(ctx, store, arg)
		if err != nil {
			return err
		}
		n, err := store.Delete(ctx, target)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("no state %q in s3://%s/%s/ (check --s3-bucket and --state-prefix)", arg, c.Bucket, prefix)
		}
		fmt.Fprintf(env.Stdout, "deleted state %s (%d objects)\n", arg, n)
		return nil
	}
	list, err := store.List(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if list == nil {
			list = []states.Info{} // [] for an empty bucket, not null
		}
		return cli.PrintJSON(env.Stdout, list)
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tVERSION\tKEPT\tSAVED\tHELD BY\tHASH")
	for _, in := range list {
		name := in.Name
		switch {
		case in.Unreadable:
			name = "(not opened by this key)"
		case name == "":
			name = "(set " + states.EnvKey + " to show)"
		}
		saved, holder := "-", "-"
		if !in.Updated.IsZero() {
			saved = in.Updated.UTC().Format(time.RFC3339)
		}
		if in.Holder != "" {
			holder = in.Holder + " until " + in.HeldUntil.UTC().Format(time.RFC3339)
		}
		// The holder is a session tag a worker wrote; the bucket is
		// shared: nothing in it reaches the terminal as it came.
		fmt.Fprintf(w, "%s\tv%d\t%d\t%s\t%s\t%s\n", oneline.Safe(name), in.Newest, in.Versions, saved, oneline.Safe(holder), in.Hash[:shortHash])
	}
	return w.Flush()
}

// shortHash is how much of a state's hash `states list` shows.
const shortHash = 16

// resolveState is what `states delete` deletes for arg: a name or a full
// hash as they are, or the full hash of the one state whose hash begins
// with arg when arg is the short hash `states list` shows (16 lowercase
// hex characters; a name can look like one, so a name's own state, if it
// has one, counts among the matches). Two matches are refused as
// ambiguous; none leaves arg as it is (a name, or nothing to delete).
func resolveState(ctx context.Context, store *states.Store, arg string) (string, error) {
	if len(arg) != shortHash || strings.Trim(arg, "0123456789abcdef") != "" {
		return arg, nil
	}
	list, err := store.List(ctx)
	if err != nil {
		return "", err
	}
	var matches []string
	for _, in := range list {
		if strings.HasPrefix(in.Hash, arg) || in.Hash == states.NameHash(arg) {
			matches = append(matches, in.Hash)
		}
	}
	switch len(matches) {
	case 0:
		return arg, nil
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("%q names %d states (a short hash they begin with, or a name): give the whole hash (`durable-browser states list --json`) or the name", arg, len(matches))
}
