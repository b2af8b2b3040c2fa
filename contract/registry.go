package contract

import (
	"encoding/json"
	"sync"
)

// Queue says which task queue serves a tool's activity.
type Queue string

const (
	// QueueShared is [SharedQueue], which every worker polls: the tools that
	// need no particular browser.
	QueueShared Queue = "shared"
	// QueueHost is the host queue of the worker holding the session's
	// browser ([SessionRef].HostQueue).
	QueueHost Queue = "host"
)

// Spec is how a tool is served, for the code that serves it (the workflows
// package, the worker and their tests); a model sees only its [Tool].
type Spec struct {
	Tool
	// Queue is the task queue its activity is scheduled on.
	Queue Queue
	// Request builds the activity's input from the session's [Call] and the
	// typed arguments (a value or a pointer, as [Validate] or a Go caller
	// gives them). Nil for a tool the workflow serves with steps of its own
	// (browser_release, browser_relaunch, browser_request_handoff).
	Request func(c Call, args any) any
	// NewResult returns a pointer to a zero result, for the activity's
	// answer to decode into.
	NewResult func() any
}

// toolSpec is one registry entry (see registry in contract.go).
type toolSpec struct {
	name, activity, desc string
	class                ReplayClass
	queue                Queue
	schema               schemaMap
	args                 argType
	result               func() any
	request              func(c Call, args any) any
	// model, when set, drops what a model need not read from an ok answer
	// (see ForModel); pageURL is the answer's url.
	model func(obj *object, args json.RawMessage, pageURL string)
	// pageText is where an ok answer holds its fenced page text ("text",
	// "observed.text"), which ForModel writes after the JSON; "" for none.
	pageText string
}

func (d toolSpec) tool() Tool {
	b, err := json.Marshal(d.schema)
	if err != nil {
		// Only maps, slices and scalars: cannot fail.
		b = []byte(`{"type":"object","additionalProperties":false}`)
	}
	return Tool{Name: d.name, Description: d.desc, Schema: b, Class: d.class, Activity: d.activity}
}

// argType is a tool's argument type: a fresh pointer to decode into, and
// the value behind such a pointer.
type argType struct {
	new   func() any
	deref func(any) any
}

func argsOf[T any]() argType {
	return argType{
		new:   func() any { return new(T) },
		deref: func(p any) any { return *p.(*T) },
	}
}

func resultOf[T any]() func() any { return func() any { return new(T) } }

// ArgsOf reads typed arguments whether given as a value or a pointer.
func ArgsOf[T any](v any) (T, bool) {
	switch a := v.(type) {
	case T:
		return a, true
	case *T:
		if a != nil {
			return *a, true
		}
	}
	var zero T
	return zero, false
}

// argValue is ArgsOf for a registry entry's own type: a mismatch gives the
// zero value, as the workflows' dispatch always had.
func argValue[T any](v any) T {
	a, _ := ArgsOf[T](v)
	return a
}

// specFor finds a registry entry by tool name.
func specFor(name string) (toolSpec, bool) {
	i, ok := toolIndex()[name]
	if !ok {
		return toolSpec{}, false
	}
	return registry()[i], true
}

// toolIndex is each tool's place in the registry, by name.
var toolIndex = sync.OnceValue(func() map[string]int {
	specs := registry()
	out := make(map[string]int, len(specs))
	for i, d := range specs {
		out[d.name] = i
	}
	return out
})

// toolOf is the named tool as a model sees it: a copy of the one rendered
// once (its schema marshalled once, not at every call), the caller's to change.
func toolOf(name string) (Tool, bool) {
	i, ok := toolIndex()[name]
	if !ok {
		return Tool{}, false
	}
	t := definitions()[i]
	t.Schema = append(json.RawMessage(nil), t.Schema...)
	return t, true
}

// Specs lists every tool as served, in [Definitions] order.
func Specs() []Spec {
	defs := Definitions()
	specs := registry()
	out := make([]Spec, len(specs))
	for i, d := range specs {
		out[i] = Spec{Tool: defs[i], Queue: d.queue, Request: d.request, NewResult: d.result}
	}
	return out
}

// SpecOf returns how the named tool is served.
func SpecOf(name string) (Spec, bool) {
	d, ok := specFor(name)
	if !ok {
		return Spec{}, false
	}
	t, _ := toolOf(name)
	return Spec{Tool: t, Queue: d.queue, Request: d.request, NewResult: d.result}, true
}
