// Package kueue runs Kueue, built from its module into bin/, beside the
// local cluster and the integration suites: on loopback, with its TFJob
// integration on, its webhooks registered by URL and its CRDs installed
// from the manifests the build copies next to the binary.
package kueue
