package crash

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

var (
	rowsMu sync.Mutex
	rows   []row
)

func record(r row) {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	rows = append(rows, r)
}

// notCovered are the cut points the matrix does not reach, and why.
var notCovered [][2]string

// writeReliability writes the observed table to path.
func writeReliability(path string) error {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	var b strings.Builder
	b.WriteString("# Reliability: the crash matrix\n\n")
	b.WriteString("Written by `make reliability` (`DURABLE_BROWSER_WRITE_RELIABILITY=1 go test -count=1 -run 'TestCrashMatrix|TestCrashRestore|TestCrashUpgrade' ./test/crash/`);\n")
	b.WriteString("do not edit by hand. Every value below was observed by that run, against the embedded Temporal server,\n")
	b.WriteString("a worker in a child process (the victim) with real Chromium, versitygw, and the demo site counting\n")
	b.WriteString("what is posted to it. The victim is cut with SIGKILL or with SIGTERM (`--stop-grace 3s`); a second\n")
	b.WriteString("worker process stands for the rest of the fleet. Sessions run with a 3 s host-queue schedule-to-start\n")
	b.WriteString("and a 5 s heartbeat timeout, so a lost worker is noticed in seconds. In the last row no worker is cut:\n")
	b.WriteString("the embedded Temporal server keeps its state in a SQLite file and is stopped and started again mid-call.\n\n")
	b.WriteString("Each row asserts: the code the agent sees; the POSTs the site counted (exactly one per submit that\n")
	b.WriteString("left the browser, none for one that did not); that resending the call with the same update id\n")
	b.WriteString("returns the first answer; that the session is usable afterwards (a snapshot succeeds, after at\n")
	b.WriteString("most a `session_replaced`); and that none of the victim's browser processes (by pid) is left.\n\n")
	b.WriteString("| cut point | signal | how the cut is placed | code the agent sees | POSTs counted (want) | resend, same update id | afterwards | victim's Chrome left | row took |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		code := "`" + r.Code + "`"
		if r.Note != "" {
			code += " (" + r.Note + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d (%d) | %s | %s | %d | %v |\n",
			r.Cut, r.Signal, r.Hook, code, r.Posts, r.WantPosts, r.Resend, r.After, r.ChromeLeft, r.Took)
	}
	b.WriteString("\n## Reading it\n\n")
	b.WriteString("- A `run` cut before it sent anything answers `effect_unknown` all the same: a begun action (here a\n")
	b.WriteString("  `wait`) counts as a possible effect. Its `sent` list is empty (asserted), and the site counted nothing.\n")
	b.WriteString("- A run holding a request for approval is a call in flight: cut, it answers `effect_unknown`; the held\n")
	b.WriteString("  POST never reached the site.\n")
	b.WriteString("- A handoff answered `done` after its browser's worker died is not taken as done: `condition_met` is\n")
	b.WriteString("  false (asserted) and the answer carries the failed check's `snapshot_failure`.\n")
	b.WriteString("- In the restart row the run's batch goes on for a few seconds after the server is back; the answer\n")
	b.WriteString("  follows it. The server keeps its internal ports across a restart: its database remembers each internal\n")
	b.WriteString("  service as a cluster member, and a restart on other ports left the old, dead members in the ring for\n")
	b.WriteString("  about a minute, during which every task routed to them waited (answers came 45-64 s after the restart).\n")
	b.WriteString("- `during release` has the victim keep checkpoints and freezes S3 (SIGSTOP): the release, started on the victim,\n")
	b.WriteString("  waits to delete the session's checkpoint when the victim is cut. (Until 2026-12-03 the row froze the victim\n")
	b.WriteString("  itself and let the server hand it the release on a poll it held open; the embedded server now drops a stalled\n")
	b.WriteString("  worker's connection within 5 s, so a frozen worker is handed nothing: [deploy.md](deploy.md#temporal).)\n")
	b.WriteString("- The two `after ..., before its result is recorded` rows are placed by a hook compiled only into the\n")
	b.WriteString("  matrix's build of the worker (`go build -tags crashhooks`, `worker/crashhook.go`): once the test arms\n")
	b.WriteString("  it, the next successful return of the named activity is held on the worker and never sent, and the\n")
	b.WriteString("  victim is cut then. A create whose result was lost is retried on the survivor (custody class); a run\n")
	b.WriteString("  whose result was lost answers `effect_unknown` although its submit reached the site (counted once).\n")
	b.WriteString("- The `cdp` rows attach both workers to one Chrome outside them (`--cdp-endpoint`), which outlives the\n")
	b.WriteString("  victim; after the session closes, the row asserts the Chrome holds no browser context of the session.\n")
	b.WriteString("- The `rolling upgrade` rows run two builds of the worker (TestCrashUpgrade): sessions signed in on the\n")
	b.WriteString("  shop call on build A without pause; build B (`-tags upgradeb`: a workflow change behind `GetVersion` that\n")
	b.WriteString("  sets a memo after a restore, and a snapshot answer that ends with a note) is started, and A is stopped with\n")
	b.WriteString("  SIGTERM while a run is under way on it. POSTs are the session's add-to-cart submits, want the runs that\n")
	b.WriteString("  answered ok; every call of the session is resent with its update id and must answer the same.\n")
	if len(notCovered) > 0 {
		b.WriteString("\n## Not covered\n\n")
		for _, n := range notCovered {
			fmt.Fprintf(&b, "- **%s**: %s.\n", n[0], n[1])
		}
	}
	fmt.Fprintf(&b, "\nLast written %s.\n", time.Now().UTC().Format("2006-01-02"))
	// Sections written by other runs (the load test's "## Load") are kept.
	if old, err := os.ReadFile(path); err == nil {
		if i := strings.Index(string(old), "\n## Load"); i >= 0 {
			b.WriteString(string(old[i:]))
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
