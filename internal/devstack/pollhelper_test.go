package devstack

import (
	"fmt"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// pollHelperEnv makes the test binary a Temporal worker polling a task
// queue of the server at its address (TestMain), instead of running tests.
const pollHelperEnv = "DEVSTACK_POLL_HELPER"

// runPollHelper polls until killed.
func runPollHelper(addr string) {
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

// pollHelper serves as the polling helper when the binary was started as
// one; it never returns then.
func pollHelper() {
	if addr := os.Getenv(pollHelperEnv); addr != "" {
		runPollHelper(addr)
	}
}
