// Package devcluster runs the local cluster of `backfill dev`: a real
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
// loopback, simulated CPU and GPU nodes (kwok), the backfill manager, the
// node agent of every node on simulated cgroups, Prometheus with
// backfill's alerting rules, Alertmanager delivering to a local webhook
// sink, a simulated GPU exporter, and a demo of online services and
// training sharing the nodes. Only the nodes, their cgroups, the GPUs and
// the online pods' latency are simulated; every scheduling, lifecycle and
// node agent decision is the real one.
package devcluster
