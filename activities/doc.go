// Package activities implements one Temporal activity per tool of the
// contract, and the session's custody activities around them.
//
// An activity turns a contract request ([contract.SnapshotRequest],
// [contract.RunRequest], ...) into driver and provider calls, files evidence
// (screenshots, reads, downloads, fetched pages) and answers a small JSON
// result or a failure envelope ([contract.Failure], returned as the error).
// It does not redact what it returns or heartbeats: the worker's redaction
// gate (internal/redactgate) does, for every activity, on the way out.
// [Activities.RegisterShared] registers those served from the shared queue
// (session creation, release by tag, web fetch and search, evidence);
// [Activities.RegisterHost] those served from this process's host queue,
// which touch a browser it holds. Which tool runs on which queue is declared
// once, in the contract's registry ([contract.SpecOf]).
//
// A worker builds one [Activities] with [New] and registers both sets; the
// worker package does that from configuration.
package activities
