// Package dashboards builds backfill's Grafana dashboards in Go: the
// co-location cockpit and the TFJob dashboard, their export variants and
// the ConfigMaps Grafana's sidecar loads. The queries are Go values that
// `backfill top` runs too, so the terminal and Grafana show the same
// numbers.
//
// The dashboards use the SDK's classic dashboard schema, which the SDK
// marks deprecated in favour of dashboardv2: file and sidecar provisioning
// and the import page of every Grafana from 10 on read the classic JSON,
// while v2 needs Grafana 12's dashboard API.
package dashboards
