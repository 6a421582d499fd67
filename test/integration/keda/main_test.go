//go:build integration

// Package keda proves the autoscaling path that GPU loans forecast from: a
// real KEDA (its operator and metrics apiserver, v2.20 built from its
// module) turns a ScaledObject with a cron trigger into an HPA, and the
// real HPA controller of kube-controller-manager scales the Deployment to
// the trigger's desiredReplicas while the cron window is open, and keeps it
// at minReplicaCount while it is closed. The external metrics API reaches
// KEDA through the kube-apiserver's aggregation layer, all on loopback. No
// pod runs: the HPA changes the Deployment's spec.replicas through its
// scale subresource, which is what the suite reads.
package keda

import (
	"os"
	"testing"

	"github.com/backfill-dev/backfill/test/framework"
)

var apiServer *framework.APIServer

func TestMain(m *testing.M) {
	setup := framework.Setup{Name: "keda", APIServer: framework.AggregatingAPIServer}
	os.Exit(framework.Run(m, setup, func(s *framework.Suite) error {
		apiServer = s.APIServer
		if _, err := s.StartKEDA(apiServer); err != nil {
			return err
		}
		// The HPA controller looks at every HPA each sync period (15 s
		// by default); 2 s keeps the suite short.
		return s.StartControllerManager(apiServer, "horizontal-pod-autoscaler-controller",
			"--horizontal-pod-autoscaler-sync-period=2s")
	}))
}
