package devstack

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// A restart of a server on a database file must route tasks to its
// workers again at once. The file remembers the internal services as
// cluster members; started on other ports, the old members stay in the
// ring for about a minute and the tasks routed to them wait that long.
func TestRestartRoutesTasksAtOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "temporal.db")
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o := TemporalOptions{DatabaseFile: db, Address: fmt.Sprintf("127.0.0.1:%d", port), Logger: zerolog.Nop()}
	ctx := context.Background()
	srv, err := StartTemporal(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Stop() }()
	c, err := client.Dial(client.Options{HostPort: o.Address})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// An update waits on an activity that is running when the server stops
	// and returns once the test says the server is back.
	started, finish := make(chan struct{}), make(chan struct{})
	act := func(context.Context) (string, error) {
		close(started)
		<-finish
		return "done", nil
	}
	wf := func(ctx workflow.Context) error {
		if err := workflow.SetUpdateHandler(ctx, "go", func(ctx workflow.Context) (string, error) {
			ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 5 * time.Minute})
			var s string
			err := workflow.ExecuteActivity(ctx, "act").Get(ctx, &s)
			return s, err
		}); err != nil {
			return err
		}
		workflow.GetSignalChannel(ctx, "stop").Receive(ctx, nil)
		return nil
	}
	w := worker.New(c, "restart", worker.Options{})
	w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "wf"})
	w.RegisterActivityWithOptions(act, activityName("act"))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "restart-" + fmt.Sprint(time.Now().UnixNano()), TaskQueue: "restart"}, "wf")
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() {
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(), UpdateName: "go", WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, nil)
		}
		answered <- err
	}()
	<-started

	before := srv.InternalPorts()
	srv.Stop()
	if srv, err = StartTemporal(ctx, o); err != nil {
		t.Fatal(err)
	}
	if after := srv.InternalPorts(); !slices.Equal(before, after) {
		t.Errorf("restarted on internal ports %v, had %v: the old members stay in the ring", after, before)
	}
	close(finish)
	// Well under the minute the dead members stay in the ring, well over
	// what routing needs (tens of milliseconds once the worker reconnects).
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("the update failed across the restart: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the update was not answered within 30 s of the server being back: tasks are routed to the members of the server before the restart")
	}
	_ = c.SignalWorkflow(ctx, run.GetID(), "", "stop", nil)
}

// A kept port another process took is no reason not to start: the server
// starts on fresh ports.
func TestRestartWithKeptPortTaken(t *testing.T) {
	db := filepath.Join(t.TempDir(), "temporal.db")
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o := TemporalOptions{DatabaseFile: db, Address: fmt.Sprintf("127.0.0.1:%d", port), Logger: zerolog.Nop()}
	srv, err := StartTemporal(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	before := srv.InternalPorts()
	srv.Stop()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", before[2]))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err = StartTemporal(context.Background(), o)
	if err != nil {
		t.Fatalf("a taken internal port stopped the restart: %v", err)
	}
	defer srv.Stop()
	if slices.Contains(srv.InternalPorts(), before[2]) {
		t.Errorf("started on the taken port %d", before[2])
	}
}

func activityName(n string) activity.RegisterOptions { return activity.RegisterOptions{Name: n} }
