// Package v1 holds the kubeflow.org/v1 TFJob API, wire-compatible with
// Kubeflow's training-operator v1: the same fields, defaults, status and
// conditions, so that existing TFJob manifests apply unchanged. Fields that
// backfill adds are marked as extensions in their documentation.
//
// +kubebuilder:object:generate=true
// +groupName=kubeflow.org
package v1
