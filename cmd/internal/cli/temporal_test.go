package cli

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/config"
)

func TestClientFlags(t *testing.T) {
	cases := []struct {
		name    string
		logHelp string
		args    []string
		badFlag string // "" when Check passes
		level   zerolog.Level
	}{
		{name: "defaults", logHelp: "levels", level: zerolog.WarnLevel},
		{name: "debug", logHelp: "levels", args: []string{"--log-level", "debug"}, level: zerolog.DebugLevel},
		{name: "no log flag logs warnings", level: zerolog.WarnLevel},
		{name: "zero timeout", logHelp: "levels", args: []string{"--timeout", "0s"}, badFlag: "timeout"},
		{name: "unknown level", logHelp: "levels", args: []string{"--log-level", "loud"}, badFlag: "log-level"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := Flags("verb", &Env{Stderr: io.Discard, Getenv: func(string) string { return "" }}, "")
			var f Client
			BindClient(fs, &f, time.Minute, "give up after this long", c.logHelp)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			if declared := fs.Lookup("log-level") != nil; declared != (c.logHelp != "") {
				t.Errorf("--log-level declared: %v, want %v", declared, c.logHelp != "")
			}
			log, err := f.Check(io.Discard, "e.g. 1m")
			var ce *config.Error
			switch {
			case c.badFlag == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case c.badFlag != "" && (!errors.As(err, &ce) || ce.Flag != c.badFlag):
				t.Fatalf("Check = %v, want a config.Error on --%s", err, c.badFlag)
			case c.badFlag == "" && log.GetLevel() != c.level:
				t.Errorf("level %v, want %v", log.GetLevel(), c.level)
			}
		})
	}
}
