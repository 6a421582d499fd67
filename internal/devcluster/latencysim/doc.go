// Package latencysim is a SIMULATOR of the request latency of the local
// cluster's online pods, for `backfill dev`, whose pods are kwok fakes that
// serve nothing.
//
// For every running pod that opts in to latency protection (the
// backfill.dev/latency-objective annotation) it publishes a real Prometheus
// classic histogram, http_server_request_duration_seconds{namespace, pod}
// unless the pod's backfill.dev/latency-metric names another, whose
// counters grow as requests are simulated. Requests arrive at a rate that
// follows the pod's simulated CPU use (CPUPerRequest each) and take an
// M/M/1 queue's response time, exponential with mean
//
//	CPUPerRequest / spare CPU
//
// where the spare CPU is what the pod could use at once but does not: the
// rest of its CPU request plus its share, by request, of the CPU nobody on
// the node uses (up to its limit). Offline pods that fill a node take that
// idle CPU, so the P99 rises when online pods are busy beside training and
// falls back when the training leaves (SpareCPU, P99).
//
// CPU use is the kwok usage annotations the rest of the local cluster sets:
// the online day's (daycycle.go) and the training simulation's. Loads turns
// nodes and pods into each pod's Load, a Simulator draws the requests with a
// random source seeded per pod, and NewServer serves the histograms,
// advancing them at every scrape.
package latencysim
