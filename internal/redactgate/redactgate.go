// Package redactgate is the one place an activity's output is redacted. It
// is a Temporal worker interceptor: every result an activity returns, every
// failure envelope or other error, and every heartbeat detail it records
// passes through the worker's redactor before the SDK encodes it for the
// server (and so before history, a caller or an outer interceptor's log line
// sees it). Activities return and heartbeat plain values: there is no call
// an activity must remember to make, so a new one cannot forget it.
//
// What the gate cannot know stays with the code that does: a page URL is
// scrubbed (scrub.URL) where it becomes a result's field, and text is
// redacted before it is cut to a bound (the driver, web_fetch). What leaves
// by another way than the activity's answer is redacted where it leaves, by
// the package that sends it, over the same redactor the worker gives each:
// evidence bodies and receipts (evidence.Filer), held requests' descriptions
// (holds), what a code cell is handed (jsengine), secrets registered as they
// are resolved (redact.Secrets). No activity calls a redactor.
package redactgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/actintercept"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/scrub"
)

// New returns the gate over r. Give it to the worker after every other
// interceptor (the innermost), so those see only redacted output too.
func New(r *redact.Redactor) interceptor.WorkerInterceptor {
	return actintercept.New(actintercept.Options{
		Execute: func(ctx context.Context, in *interceptor.ExecuteActivityInput, next actintercept.Next) (any, error) {
			return execute(ctx, r, in, next)
		},
		Outbound: func(next interceptor.ActivityOutboundInterceptor) interceptor.ActivityOutboundInterceptor {
			o := &outboundGate{r: r}
			o.Next = next
			return o
		},
	})
}

func execute(ctx context.Context, r *redact.Redactor, in *interceptor.ExecuteActivityInput, next actintercept.Next) (any, error) {
	out, err := next(ctx, in)
	if f, ok := err.(*contract.Failure); ok && f == nil {
		// A nil envelope handed back as an error is no failure.
		err = nil
	}
	if err != nil {
		return nil, Error(r, err)
	}
	clean, cerr := Value(r, out)
	if cerr != nil {
		// Fail closed: an answer that cannot be redacted is not sent.
		f := contract.Fail(contract.CodeCommandFailed,
			"the call finished, but its result could not be cleaned of secrets, so it is not returned; what the call did stands, so check before repeating it").
			WithDetail(cerr.Error()).Effected()
		f.Retryable = false
		return nil, Error(r, f)
	}
	return clean, nil
}

type outboundGate struct {
	interceptor.ActivityOutboundInterceptorBase
	r *redact.Redactor
}

// RecordHeartbeat redacts each detail. One that cannot be redacted is sent
// as null: the beat still says the call is alive.
func (o *outboundGate) RecordHeartbeat(ctx context.Context, details ...any) {
	clean := make([]any, len(details))
	for k, d := range details {
		if v, err := Value(o.r, d); err == nil {
			clean[k] = v
		}
	}
	o.Next.RecordHeartbeat(ctx, clean...)
}

// Value returns v with every string in its JSON form passed through r (as
// Redactor.JSON does), as a value of v's own type: v itself when nothing
// needed hiding, else a new value decoded from the redacted JSON (v is not
// changed). A byte slice given whole is redacted as text; one inside v is
// seen as JSON spells it, base64, where a registered value is found only at
// an offset divisible by 3 (result types carry text as strings; the one byte
// field, an evidence body, was redacted when filed). The error says v could not
// be encoded or its redacted form no longer fits its type (a registered
// all-digit value in a number field): do not send v then.
func Value(r *redact.Redactor, v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return r.Bytes(x), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	red := r.JSON(raw)
	if bytes.Equal(red, raw) {
		return v, nil
	}
	p := reflect.New(reflect.TypeOf(v))
	if err := json.Unmarshal(red, p.Interface()); err != nil {
		return nil, err
	}
	return p.Elem().Interface(), nil
}

// Error returns err as it may leave the worker. A failure envelope (a
// *contract.Failure, or an error envelope.Error made) comes back as the
// envelope's error with every field redacted, the last URL scrubbed, and the
// detail cut to its bound after redaction, never before. Another error whose
// text holds nothing to hide, and that carries no details, is returned as it
// is (a cancel stays a cancel); else it becomes an application error of the
// same type and retry stance with the redacted text, without its cause or
// details, which the gate cannot read.
func Error(r *redact.Redactor, err error) error {
	if err == nil {
		return nil
	}
	if f, ok := envelope.From(err); ok && f != nil {
		return envelope.Error(cleanFailure(r, f))
	}
	text := err.Error()
	var app *temporal.ApplicationError
	isApp := errors.As(err, &app)
	if r.String(text) == text && (!isApp || !app.HasDetails()) {
		return err
	}
	o := temporal.ApplicationErrorOptions{}
	typ := typeName(err)
	msg := text
	if isApp {
		typ, msg = app.Type(), app.Message()
		o.NonRetryable, o.Category, o.NextRetryDelay = app.NonRetryable(), app.Category(), app.NextRetryDelay()
		if c := errors.Unwrap(app); c != nil {
			msg += ": " + c.Error()
		}
	}
	return temporal.NewApplicationErrorWithOptions(r.String(msg), typ, o)
}

// cleanFailure is f redacted whole, then bounded; f is not changed.
func cleanFailure(r *redact.Redactor, f *contract.Failure) *contract.Failure {
	c := *f
	c.LastURL = scrub.URL(c.LastURL)
	v, err := Value(r, &c)
	if err != nil {
		// Only a number field can fail to hold its redacted form: keep
		// what a caller acts on and drop the rest.
		return &contract.Failure{Code: c.Code, Retryable: c.Retryable, Effect: c.Effect, Reason: c.Reason, Message: r.String(c.Message)}
	}
	return v.(*contract.Failure).BoundDetail()
}

var goErrType = reflect.TypeOf(errors.New("")).Elem().Name()

// typeName is the type the SDK gives an error it converts: the name of its
// type, pointers taken off (empty for an errors.New error).
func typeName(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == goErrType {
		return ""
	}
	return t.Name()
}
