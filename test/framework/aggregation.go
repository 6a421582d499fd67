package framework

import (
	"fmt"

	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
)

// StartAggregatingAPIServer is StartAPIServer with the aggregation layer's
// front proxy set up, so that the apiserver can proxy to aggregated API
// servers such as metrics-server (StartMetricsServer). The front-proxy
// credentials are written into dir.
func StartAggregatingAPIServer(dir string) (*APIServer, error) {
	fp, err := metricsserver.WriteFrontProxy(dir)
	if err != nil {
		return nil, fmt.Errorf("writing the front-proxy certificates: %w", err)
	}
	return startAPIServer(fp.APIServerFlags())
}
