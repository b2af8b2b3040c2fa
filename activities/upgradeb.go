//go:build upgradeb

package activities

import "github.com/durable-browser/durable-browser/contract"

// UpgradeBNote is the last line of every snapshot build B of the
// rolling-upgrade test (test/crash, TestCrashUpgrade; -tags upgradeb)
// answers: a tool whose answer changed between builds, so the test can
// tell which build served a call. No release build holds it.
const UpgradeBNote = "(served by test build upgradeb)"

func markBuild(res *contract.SnapshotResult) { res.Text += "\n" + UpgradeBNote }
