package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/recorder"
)

const recordingUsage = `Usage: durable-browser recording get [flags] WORKFLOW_ID -o run.webm

Reads every recording chunk of the workflow's sessions (SessionOptions.record)
from the evidence store, verified against their hashes, and writes a WebM made
by ffmpeg, with an index (JSON) mapping recording time to video time. Gaps
(credentials on the page, releases, lost workers) show as a striped slate.
The S3 flags and the dev-stack default are those of evidence get.

Flags:
`

func runRecording(ctx context.Context, env *cliEnv, args []string) error {
	if _, err := cli.Subverb(args, "recording", "`durable-browser recording get WORKFLOW_ID -o run.webm`", func() {
		fmt.Fprint(env.Stderr, "Usage: durable-browser recording get [flags] WORKFLOW_ID -o run.webm\n\nSee docs/recording.md.\n")
	}, "get"); err != nil {
		return err
	}
	fs := cli.Flags("recording get", env, recordingUsage)
	var s3 config.S3
	var out, index, ffmpeg string
	var timeout time.Duration
	config.BindS3(fs, &s3)
	fs.StringVar(&out, "o", "", "the WebM file to write (required; a file name, not a directory)")
	fs.StringVar(&index, "index", "", "the index JSON file to write (default: -o's name with .index.json)")
	fs.StringVar(&ffmpeg, "ffmpeg", "ffmpeg", "the ffmpeg executable (scripts/install-ffmpeg.sh installs Debian's)")
	fs.Duration(&timeout, "timeout", 10*time.Minute, "give up after this long (ffmpeg included)")
	wf, err := parseInterspersed(fs, args[1:], "WORKFLOW_ID")
	if err != nil {
		return err
	}
	if out == "" {
		return &config.Error{Flag: "o", Problem: "no output file given", Fix: "e.g. -o run.webm"}
	}
	if err := checkOutFile("o", out, "e.g. -o run.webm"); err != nil {
		return err
	}
	if index == "" {
		index = strings.TrimSuffix(out, filepath.Ext(out)) + ".index.json"
	} else if err := checkOutFile("index", index, "e.g. --index run.index.json"); err != nil {
		return err
	}
	dev := false
	if s3.Bucket == "" {
		dev = true
		devDefaults(&s3, fs)
	}
	if err := config.ValidateS3(s3); err != nil {
		return err
	}
	if timeout <= 0 {
		return &config.Error{Flag: "timeout", Problem: "must be positive", Fix: "e.g. 10m"}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	store, err := openS3(ctx, env, s3, strings.Trim(s3.Prefix, "/"), dev, "read")
	if err != nil {
		return err
	}
	chunks, err := recorder.Load(ctx, store, wf)
	if err != nil {
		if dev && !errors.Is(err, recorder.ErrNoRecording) {
			return fmt.Errorf("reading the dev stack's S3 at %s (no --s3-bucket was named): %w", s3.Endpoint, err)
		}
		return err
	}
	x := recorder.Build(wf, chunks)
	// ffmpeg writes beside the target; the WebM appears only once whole.
	tmp := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".tmp.webm")
	defer os.Remove(tmp)
	if err := recorder.Export(ctx, x, tmp, recorder.ExportOptions{FFmpeg: ffmpeg, Timeout: timeout}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	if err := commitRecording(tmp, out, index, append(b, '\n')); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "wrote %s (%.1f s, %d recordings, %d segments) and %s\n", out, float64(x.VideoMS)/1000, len(x.Recordings), len(x.Segments), index)
	return nil
}

// checkOutFile refuses an output (flag -o or --index) that names a
// directory, or a file in a directory that does not exist, before anything
// is read or made.
func checkOutFile(flag, path, fix string) error {
	if strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)) {
		return &config.Error{Flag: flag, Problem: fmt.Sprintf("%s ends with a separator: it names a file to write, not a directory", path), Fix: fix}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return &config.Error{Flag: flag, Problem: fmt.Sprintf("%s is a directory: it names a file to write", path), Fix: fix}
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return &config.Error{Flag: flag, Problem: fmt.Sprintf("the directory %s does not exist", filepath.Dir(path)), Fix: "create it first"}
	}
	return nil
}

// commitRecording puts the finished WebM (tmp) at out and the index JSON
// at index, or neither: a failure leaves nothing this run made behind (the
// caller removes tmp).
func commitRecording(tmp, out, index string, indexJSON []byte) error {
	itmp, err := tempBeside(index, indexJSON)
	if err != nil {
		return fmt.Errorf("--index %s: %w", index, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		_ = os.Remove(itmp)
		return fmt.Errorf("-o %s: %w (-o names the WebM file to write; nothing was written)", out, err)
	}
	if err := os.Rename(itmp, index); err != nil {
		_ = os.Remove(itmp)
		return fmt.Errorf("--index %s: %w (the WebM was written to %s, its index was not)", index, err, out)
	}
	return nil
}
