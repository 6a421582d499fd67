// Package metricsserver serves the Kubernetes metrics API (metrics.k8s.io:
// what `kubectl top` and backfill's metrics-api usage source read) in the
// local cluster and the suites. metrics-server (built into bin/ from
// hack/tools/metrics-server) scrapes the simulated nodes' kubelet metrics
// from kwok, and the kube-apiserver's aggregation layer proxies the API to
// it, everything on loopback.
//
// Three pieces wire it, one file each:
//   - FrontProxy: the credentials with which the apiserver proxies to
//     aggregated servers (a client certificate, and the user in X-Remote-*
//     headers), and the apiserver flags that use them;
//   - Serving: metrics-server's serving certificate, whose CA the
//     APIService carries so that the apiserver verifies it;
//   - Register: the APIService v1beta1.metrics.k8s.io and the Service it
//     points at. Endpoints may not name loopback addresses, but the
//     apiserver routes a Service of type ExternalName to
//     <externalName>:<APIService port> (ResolveCluster in
//     k8s.io/apiserver/pkg/util/proxy), so an ExternalName "localhost"
//     reaches metrics-server on 127.0.0.1.
//
// RegisterAPIService and WaitOK do the same for any aggregated API server
// on loopback (the suites register KEDA's external metrics API with them).
//
// Args are metrics-server's flags; the caller runs it as a child process.
package metricsserver
