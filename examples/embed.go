// Package examples embeds the example manifests, so that `backfill dev`
// can load them without a checkout.
package examples

import "embed"

// FS holds every YAML file of this folder.
//
//go:embed *.yaml
var FS embed.FS
