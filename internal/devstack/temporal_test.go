package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"
)

func TestTemporalPersistsAcrossRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "temporal.db")
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ctx := context.Background()
	start := func() *Temporal {
		t.Helper()
		tmp, err := StartTemporal(ctx, TemporalOptions{DatabaseFile: db, Address: addr, Logger: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		return tmp
	}
	srv := start()
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		srv.Stop()
		t.Fatal(err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "persist-me", TaskQueue: "nobody-polls"}, "NoSuchWorkflow")
	c.Close()
	if err != nil {
		srv.Stop()
		t.Fatal(err)
	}
	srv.Stop()

	// A taken frontend port is refused with a typed error.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, err = StartTemporal(ctx, TemporalOptions{DatabaseFile: db, Address: addr, Logger: zerolog.Nop()})
	ln.Close()
	if !errors.Is(err, ErrPortTaken) {
		t.Fatalf("want ErrPortTaken, got %v", err)
	}

	srv = start()
	defer srv.Stop()
	c, err = client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(dctx, "persist-me", run.GetRunID())
	if err != nil {
		t.Fatalf("workflow started before the restart is gone: %v", err)
	}
	if desc.WorkflowExecutionInfo.Execution.RunId != run.GetRunID() {
		t.Fatalf("run id changed")
	}
}
