package test

import (
	"context"
	"encoding/json"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// rpcLog is the frontend methods a client called, in order.
type rpcLog struct {
	mu  sync.Mutex
	got []string
}

func (l *rpcLog) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	l.mu.Lock()
	l.got = append(l.got, path.Base(method))
	l.mu.Unlock()
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (l *rpcLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}

// A session's first call starts it in the round trip after the Update
// that finds none running, with no look-up of an earlier run first (16
// sessions opened at once each paid one); a call after a session ended
// still looks the ended one up, whose record answers a resent call and
// names the next tag.
func TestFirstCallStartsWithoutALookUp(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	rpcs := &rpcLog{}
	c, err := client.Dial(client.Options{HostPort: env.Temporal.Address(), Namespace: "default", Logger: logging.NewSDKLogger(zerolog.Nop()),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(rpcs.intercept)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newSession(t, workflows.SessionConfig{})
	call := func(tool string, o dbclient.CallOptions) json.RawMessage {
		t.Helper()
		o.Config = s.cfg
		out, err := dbclient.Call(ctx, c, s.id, contract.ToolCall{Name: tool, Args: json.RawMessage(`{}`)}, o)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return out
	}
	rpcs.take() // the dial's own
	var snap contract.SnapshotResult
	if err := json.Unmarshal(call("snapshot", dbclient.CallOptions{}), &snap); err != nil || snap.URL != "about:blank" {
		t.Fatalf("first call: %+v %v", snap, err)
	}
	got := rpcs.take()
	if slices.Contains(got, "DescribeWorkflowExecution") || !slices.Contains(got, "ExecuteMultiOperation") {
		t.Fatalf("a first call sent %v: want the session started (ExecuteMultiOperation) with no DescribeWorkflowExecution", got)
	}
	call("browser_release", dbclient.CallOptions{})
	rpcs.take()
	call("snapshot", dbclient.CallOptions{New: true})
	if got := rpcs.take(); !slices.Contains(got, "DescribeWorkflowExecution") {
		t.Fatalf("a call after the session ended sent %v: want its run looked up", got)
	}
	if tag := state(t, s.id).Tag; tag != workflows.SessionTag(s.id, 2) {
		t.Fatalf("the new session's tag is %q, want %q", tag, workflows.SessionTag(s.id, 2))
	}
}
