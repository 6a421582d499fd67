// Package promconfig writes the prometheus.yml of the local cluster of
// `backfill dev`: which servers its Prometheus scrapes, and with which labels,
// so that the series look as they would under kube-prometheus-stack on a real
// cluster and its dashboards and alerts work unchanged.
package promconfig
