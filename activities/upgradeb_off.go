//go:build !upgradeb

package activities

import "github.com/durable-browser/durable-browser/contract"

// markBuild leaves a snapshot as it is outside the rolling-upgrade test's
// build B (upgradeb.go).
func markBuild(*contract.SnapshotResult) {}
