//go:build !upgradeb

package workflows

import "go.temporal.io/sdk/workflow"

// afterRestore does nothing outside the rolling-upgrade test's build B
// (upgradeb.go): release builds issue no command here.
func afterRestore(workflow.Context) {}
