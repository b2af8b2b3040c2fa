//go:build upgradeb

package workflows

import "go.temporal.io/sdk/workflow"

// Build B of the rolling-upgrade test (test/crash, TestCrashUpgrade) is the
// worker built with -tags upgradeb: a workflow change a new release could
// ship, behind workflow.GetVersion like any other. No release build holds it.

// changeUpgradeB: after a session is restored, it records in its memo which
// build restored it (a new command, UpsertWorkflowProperties). Sessions
// whose restore was recorded before replay it without the command.
const changeUpgradeB = "upgrade-b-test"

// UpgradeBMemo is the memo key build B sets after a restore.
const UpgradeBMemo = "upgrade_b_restored"

func afterRestore(ctx workflow.Context) {
	if workflow.GetVersion(ctx, changeUpgradeB, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{UpgradeBMemo: "build B"}); err != nil {
		workflow.GetLogger(ctx).Warn("upgrade-b memo not set", "error", err.Error())
	}
}
