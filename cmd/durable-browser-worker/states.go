package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/states"
)

const statesUsage = `Usage: durable-browser states list [flags]
       durable-browser states delete [flags] NAME|HASH

Verbs:
  list     the named states in the bucket: name (when DURABLE_BROWSER_STATE_KEY
           opens them), versions, last save, the session holding each
  delete   remove every version of a state and its lease

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
		n, err := store.Delete(ctx, arg)
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
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
		return err
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
		fmt.Fprintf(w, "%s\tv%d\t%d\t%s\t%s\t%s\n", name, in.Newest, in.Versions, saved, holder, in.Hash[:16])
	}
	return w.Flush()
}
