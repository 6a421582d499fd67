// Package amconfig writes the alertmanager.yml of the local cluster of
// `backfill dev`: every alert its Prometheus sends goes, grouped as an
// on-call team would group backfill's alerts, to one webhook receiver, the
// local sink that records each notification.
package amconfig
