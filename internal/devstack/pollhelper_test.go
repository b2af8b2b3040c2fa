package devstack

import (
	"fmt"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// pollHelperEnv makes the test binary a Temporal worker polling a task
// queue of the server at its address, instead of running tests
// (TestFrozenWorkerConnectionDropped).
const pollHelperEnv = "DEVSTACK_POLL_HELPER"

// pollHelper polls until killed when the binary was started as the
// helper, and returns at once otherwise.
func pollHelper() {
	addr := os.Getenv(pollHelperEnv)
	if addr == "" {
		return
	}
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		fmt.Println("POLLERR=" + err.Error())
		os.Exit(1)
	}
	w := worker.New(c, "stalled", worker.Options{})
	w.RegisterWorkflowWithOptions(func(workflow.Context) error { return nil }, workflow.RegisterOptions{Name: "noop"})
	if err := w.Start(); err != nil {
		fmt.Println("POLLERR=" + err.Error())
		os.Exit(1)
	}
	fmt.Println("POLLING")
	select {} // wait to be killed
}
