// Package devcluster runs the local cluster of `backfill dev`: a real
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
// loopback, simulated CPU and GPU nodes (kwok), the backfill manager,
// Prometheus with backfill's alerting rules, Alertmanager delivering to a
// local webhook sink, a simulated GPU exporter, and a demo of online services
// and training sharing the nodes. Only the nodes and the GPUs are
// simulated; every scheduling and lifecycle decision is the real one.
package devcluster
