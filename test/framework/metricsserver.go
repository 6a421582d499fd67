package framework

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
)

// metricsServerStart bounds metrics-server's start and its registration.
const metricsServerStart = time.Minute

// StartMetricsServer runs bin/metrics-server on a free loopback port
// against the apiserver, which must aggregate (StartAggregatingAPIServer),
// logging into dir, and registers it as metrics.k8s.io/v1beta1. It returns
// once the apiserver reports the API available; metrics of nodes and pods
// follow two to three metricsserver.Resolution later. The nodes must carry
// kwok.ResourceMetricsPathAnnotation.
func (a *APIServer) StartMetricsServer(dir string) (*Process, error) {
	if err := requireBinaries("metrics-server"); err != nil {
		return nil, err
	}
	kubeconfig, err := a.AdminKubeconfig(dir, "metrics-server")
	if err != nil {
		return nil, err
	}
	serving, err := metricsserver.WriteServing(dir)
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p, err := startProcess("metrics-server", dir, metricsserver.Args(metricsserver.Options{
		Kubeconfig: kubeconfig, Port: port, Serving: serving,
	})...)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	address := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	err = metricsserver.WaitServing(ctx, address, serving, p.proc.Done(), metricsServerStart)
	if err == nil {
		err = metricsserver.Register(ctx, a.Env.Config, port, serving.CABundle, metricsServerStart)
	}
	if err != nil {
		return nil, errors.Join(err, p.Stop())
	}
	return p, nil
}
