// Package rbac embeds the ClusterRoles backfill installs for its users,
// so that the binary can install them (backfill dev) without a checkout.
package rbac

import _ "embed"

// TFJobRoles are the ClusterRoles that aggregate TFJob rights into the
// built-in admin, edit and view roles.
//
//go:embed tfjob-roles.yaml
var TFJobRoles []byte

// ClusterView is the ClusterRole of doctor's cluster-wide reads.
//
//go:embed cluster-view.yaml
var ClusterView []byte

// ClusterViewRole is the name of ClusterView, which commands name to a
// user who lacks the reads it grants.
const ClusterViewRole = "backfill-cluster-view"
