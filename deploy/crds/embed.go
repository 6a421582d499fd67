// Package crds embeds the CRDs backfill serves, so that the binary can
// install them (backfill dev) without a checkout.
package crds

import _ "embed"

// TFJob is the kubeflow.org/v1 TFJob CRD, as `make generate` writes it.
//
//go:embed kubeflow.org_tfjobs.yaml
var TFJob []byte
