package driver

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	rodcdp "github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/utils"

	"github.com/durable-browser/durable-browser/internal/proccpu"
)

// cdpCount counts the CDP requests sent and events received, by method.
type cdpCount struct {
	mu     sync.Mutex
	calls  map[string]int
	events map[string]int
}

func (c *cdpCount) Println(vs ...interface{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range vs {
		switch m := v.(type) {
		case *rodcdp.Request:
			c.calls[m.Method]++
		case *rodcdp.Event:
			c.events[m.Method]++
		}
	}
}

// take returns the counts so far and starts again.
func (c *cdpCount) take() (calls, events map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	calls, events = c.calls, c.events
	c.calls, c.events = map[string]int{}, map[string]int{}
	return calls, events
}

// BenchmarkToolCost goes round the load test's cycle (test/load_test.go:
// goto, an interactive snapshot, a submit that fills, clicks and waits for
// the next page's text, a viewport screenshot, browser_read) on one session,
// b.N times, and reports for each tool the CPU of the test's Chrome (its
// whole process group, from /proc) and the CDP requests sent and events
// received per call; -v lists them by method. The tools' own calls are the
// driver's, with what the activities ask besides (a screenshot's URL and
// title). Chrome's time is read around each call, so work a call leaves
// behind (a paint after the answer) counts to the next one.
//
//	go test -run '^$' -bench BenchmarkToolCost -benchtime 40x -v ./internal/driver/
func BenchmarkToolCost(b *testing.B) {
	count := &cdpCount{calls: map[string]int{}, events: map[string]int{}}
	cdpLog = count // this connection's client keeps it
	br := attach(b, Options{})
	cdpLog = utils.LoggerQuiet
	// Another run's session (b.N=1 first) would still get every page's
	// events: only one is attached at a time.
	defer br.Close()
	leader := map[int]bool{chromePID: true}
	type cost struct {
		n              int
		chrome, wall   time.Duration
		started        int // Chrome processes that began during its calls
		byType         map[string]time.Duration
		calls, events  map[string]int
		nCalls, nEvent int
	}
	tools := []string{"goto", "snapshot", "submit", "screenshot", "read"}
	costs := map[string]*cost{}
	for _, tool := range tools {
		costs[tool] = &cost{calls: map[string]int{}, events: map[string]int{}, byType: map[string]time.Duration{}}
	}
	measure := func(tool string, call func() error) {
		count.take()
		pids := map[int]bool{}
		byType := func(pid int) string { pids[pid] = true; return proccpu.Type(pid) }
		c0, t0 := proccpu.GroupsBy(leader, byType), time.Now()
		before := pids
		pids = map[int]bool{}
		if err := call(); err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
		wall, c1 := time.Since(t0), proccpu.GroupsBy(leader, byType)
		calls, events := count.take()
		c := costs[tool]
		c.n++
		for pid := range pids {
			if !before[pid] {
				c.started++
			}
		}
		for k, d := range c1 {
			c.byType[k] += d - c0[k]
			c.chrome += d - c0[k]
		}
		c.wall += wall
		for m, k := range calls {
			c.calls[m] += k
			c.nCalls += k
		}
		for m, k := range events {
			c.events[m] += k
			c.nEvent += k
		}
	}
	run := func(js string) error {
		acts, err := ParseActions(json.RawMessage(js))
		if err != nil {
			return err
		}
		_, err = br.Run(ctxT(b), acts, RunOptions{})
		return err
	}
	gotoPage(b, br, siteURL+"/")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		measure("goto", func() error {
			return run(fmt.Sprintf(`[{"op":"goto","url":%q}]`, fmt.Sprintf("%s/?visit=%d", siteURL, i)))
		})
		var text string
		measure("snapshot", func() error {
			s, err := br.Snapshot(ctxT(b), SnapshotOptions{Mode: "interactive"})
			if s != nil {
				text = s.Text
			}
			return err
		})
		email, submit := idOf(b, text, `textbox "Email"`), idOf(b, text, `button "Create account"`)
		measure("submit", func() error {
			return run(fmt.Sprintf(`[{"op":"fill","id":%q,"value":"cost-%d@load.example"},{"op":"click","id":%q},{"op":"wait","text":"Thanks"}]`, email, i, submit))
		})
		measure("screenshot", func() error {
			_, err := br.Screenshot(ctxT(b), ScreenshotOptions{})
			// The activity names the page the image shows.
			_, _ = br.URL(ctxT(b)), br.Title(ctxT(b))
			return err
		})
		measure("read", func() error {
			_, err := br.Read(ctxT(b), ReadOptions{})
			return err
		})
	}
	b.StopTimer()
	var chrome time.Duration
	var n, calls, events int
	for _, tool := range tools {
		c := costs[tool]
		chrome += c.chrome
		n += c.n
		calls += c.nCalls
		events += c.nEvent
		b.ReportMetric(float64(c.chrome)/float64(c.n)/1e6, tool+"-chrome-ms")
		b.ReportMetric(float64(c.nCalls)/float64(c.n), tool+"-cdp-calls")
		var types []string
		for k, d := range c.byType {
			types = append(types, fmt.Sprintf("%s %.1f", k, float64(d)/float64(c.n)/1e6))
		}
		sort.Strings(types)
		b.Logf("%s: Chrome %.1f ms (%s; %.1f processes started), wall %.1f ms, %.1f CDP calls and %.1f events per call\n  calls: %s\n  events: %s", tool,
			float64(c.chrome)/float64(c.n)/1e6, strings.Join(types, ", "), float64(c.started)/float64(c.n), float64(c.wall)/float64(c.n)/1e6, float64(c.nCalls)/float64(c.n), float64(c.nEvent)/float64(c.n),
			perCall(c.calls, c.n), perCall(c.events, c.n))
	}
	b.ReportMetric(float64(chrome)/float64(n)/1e6, "chrome-ms/call")
	b.ReportMetric(float64(calls)/float64(n), "cdp-calls/call")
	b.ReportMetric(float64(events)/float64(n), "cdp-events/call")
}

// perCall lists counts by method, most first, as per-call averages.
func perCall(m map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var s []kv
	for k, v := range m {
		s = append(s, kv{k, v})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v || s[i].v == s[j].v && s[i].k < s[j].k })
	var out []string
	for _, e := range s {
		out = append(out, fmt.Sprintf("%s %.1f", e.k, float64(e.v)/float64(n)))
	}
	return strings.Join(out, ", ")
}
