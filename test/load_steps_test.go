package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durable-browser/durable-browser/contract"
)

// firstCallSteps splits the sessions' first calls (a goto that starts the
// session's workflow, its create, then the goto) by step, from each
// session's history and what the worker logged of its create ("session
// created" and, under context isolation, "browser context opened in the
// shared browser", each with its steps_ms). Each step's p50 and max over
// the sessions, as a markdown table; docs/benchmarks.md reads it.
func firstCallSteps(ids []string, calls []*loadCall, workerLog string) string {
	first := map[string]*loadCall{}
	for _, c := range calls {
		if c.opens {
			first[strings.TrimSuffix(c.updateID, "-c000")] = c
		}
	}
	type logged struct {
		Tag   string             `json:"session_tag"`
		WF    string             `json:"workflow_id"`
		Sess  string             `json:"session"`
		Msg   string             `json:"message"`
		Warm  bool               `json:"warm"`
		Steps map[string]float64 `json:"steps_ms"`
	}
	created := map[string]logged{} // by workflow id
	opened := map[string]logged{}  // by tag
	sc := bufio.NewScanner(strings.NewReader(workerLog))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `"steps_ms"`) {
			continue
		}
		var l logged
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		switch l.Msg {
		case "session created":
			created[l.WF] = l
		case "browser context opened in the shared browser":
			opened[l.Sess] = l
		}
	}
	steps := map[string][]time.Duration{}
	var order []string
	add := func(name string, d time.Duration) {
		if _, ok := steps[name]; !ok {
			order = append(order, name)
		}
		steps[name] = append(steps[name], d)
	}
	msd := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	warm := 0
	for _, id := range ids {
		c := first[id]
		if c == nil || !c.ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var evs []*historypb.HistoryEvent
		it := env.Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				break
			}
			evs = append(evs, ev)
		}
		cancel()
		at := func(ev *historypb.HistoryEvent) time.Time { return ev.GetEventTime().AsTime() }
		var started, wftStarted, firstWFT, midStarted time.Time
		sched := map[int64]*historypb.HistoryEvent{}
		type act struct{ sched, start, done time.Time }
		var create, run *act
		for _, ev := range evs {
			switch {
			case ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
				started = at(ev)
			case ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_TASK_STARTED && wftStarted.IsZero():
				wftStarted = at(ev)
			case ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_TASK_STARTED && create != nil && !create.done.IsZero() && run == nil && midStarted.IsZero():
				midStarted = at(ev)
			case ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && firstWFT.IsZero():
				firstWFT = at(ev)
			case ev.GetActivityTaskScheduledEventAttributes() != nil:
				sched[ev.GetEventId()] = ev
			case ev.GetActivityTaskStartedEventAttributes() != nil:
				s := sched[ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()]
				name := s.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
				if name == contract.ActivityCreate && create == nil {
					create = &act{sched: at(s), start: at(ev)}
				} else if name == contract.ActivityRun && run == nil && create != nil {
					run = &act{sched: at(s), start: at(ev)}
				}
			case ev.GetActivityTaskCompletedEventAttributes() != nil:
				s := sched[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]
				name := s.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
				if name == contract.ActivityCreate && create != nil && create.done.IsZero() {
					create.done = at(ev)
				} else if name == contract.ActivityRun && run != nil && run.done.IsZero() {
					run.done = at(ev)
				}
			}
		}
		if started.IsZero() || firstWFT.IsZero() || create == nil || create.done.IsZero() || run == nil || run.done.IsZero() {
			continue
		}
		answered := c.began.Add(c.elapsed)
		add("call sent -> workflow started", started.Sub(c.began))
		add("first workflow task: waiting for a poll", wftStarted.Sub(started))
		add("first workflow task: run", firstWFT.Sub(wftStarted))
		add("create: waiting on the create queue", create.start.Sub(create.sched))
		add("create: the activity", create.done.Sub(create.start))
		if l, ok := created[id]; ok {
			warm += map[bool]int{true: 1}[l.Warm]
			add("  checks before the browser", msd(l.Steps["before"]))
			add("  egress proxy", msd(l.Steps["egress"]))
			add("  browser (provider create, or a warm one taken)", msd(l.Steps["browser"]))
			if o, ok := opened[l.Tag]; ok {
				add("    shared Chrome (its start, or the wait for it)", msd(o.Steps["shared"]))
				add("    Target.createBrowserContext", msd(o.Steps["context"]))
				add("    Target.createTarget (the page)", msd(o.Steps["page"]))
			}
			add("  driver attach", msd(l.Steps["attach"]))
			add("  the rest (first pages, the create's checkpoint, the SDK)", create.done.Sub(create.start)-msd(l.Steps["total"]))
		}
		if !midStarted.IsZero() {
			add("create done -> workflow task started", midStarted.Sub(create.done))
			add("workflow task started -> goto scheduled", run.sched.Sub(midStarted))
		}
		add("goto: waiting on the host queue", run.start.Sub(run.sched))
		add("goto: the activity", run.done.Sub(run.start))
		add("goto done -> answer at the caller", answered.Sub(run.done))
		add("first call, total", c.elapsed)
	}
	if len(order) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nfirst calls by step (%d sessions, %d took a warm browser)\n\n| step | p50 ms | max ms |\n|---|---|---|\n", len(steps[order[0]]), warm)
	for _, name := range order {
		v := slices.Clone(steps[name])
		slices.Sort(v)
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, ms(percentile(v, .5)), ms(v[len(v)-1]))
	}
	return b.String()
}
