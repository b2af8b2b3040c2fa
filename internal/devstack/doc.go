// Package devstack runs the services `durable-browser dev` and the
// end-to-end tests need, embedded or as child processes on loopback: a
// Temporal server ([Temporal], SQLite-backed, in process), its Web UI
// ([UI]), an S3 server ([S3], versitygw over a directory) and the demo site.
// [StartStack] starts them all in order and [Stack.Stop] ends every process
// it started. Only the dev binary links it (it pulls in the Temporal server).
package devstack
