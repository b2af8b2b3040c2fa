package driver

import (
	"bytes"
	"log"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/defaults"
)

// Whatever rod's package defaults say (here as if the command line carried
// -rod=slow=2s,trace,monitor,url=...,cdp), the driver's browser ignores them:
// no slow motion, no CDP logging, no monitor, and no panic over a control URL
// set beside its own client.
func TestRodDefaultsIgnored(t *testing.T) {
	var logged bytes.Buffer
	std := log.Writer()
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(std) })
	defaults.ResetWith("slow=2s,trace,monitor=127.0.0.1:0,url=ws://127.0.0.1:1/devtools/browser/x,cdp")
	t.Cleanup(defaults.Reset)
	if defaults.Slow != 2*time.Second || defaults.URL == "" {
		t.Fatalf("rod's defaults were not set up for the test: slow %v, url %q", defaults.Slow, defaults.URL)
	}

	b := attach(t, Options{})
	start := time.Now()
	gotoPage(t, b, siteURL+"/")
	mustRun(t, b, `[{"op":"press","key":"Tab"}]`)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("goto and a key press took %v: rod's slow motion is on", d)
	}
	if logged.Len() > 0 {
		t.Errorf("rod logged through the standard logger (cdp or trace on):\n%.500s", logged.String())
	}
}
