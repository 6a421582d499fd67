// Package alertsink is the webhook receiver of the local cluster's
// Alertmanager: it records every notification it receives as one JSON line
// of a file, for `backfill dev alerts` and tests to read, and answers 200 so
// that Alertmanager counts it delivered.
package alertsink
