//go:build integration

// Package gang runs the manager against a real apiserver that serves
// Volcano's PodGroup API, and checks how a distributed TFJob joins a
// Volcano gang.
package gang

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/test/framework"
)

var apiServer *framework.APIServer

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "gang"}, func(s *framework.Suite) error {
		apiServer = s.APIServer
		// The PodGroup API must be served before the manager starts: it
		// looks for a gang scheduler once, at start.
		if _, err := envtest.InstallCRDs(apiServer.Env.Config, envtest.CRDInstallOptions{
			Paths: []string{filepath.Join("testdata", "podgroup-crds.yaml")}, ErrorIfPathMissing: true,
		}); err != nil {
			return fmt.Errorf("installing the PodGroup CRD: %w", err)
		}
		if err := waitServed(); err != nil {
			return err
		}
		opts := framework.ManagerOptions()
		opts.RetireAfter = 0 // retire finished jobs at once, for TestVolcanoGang
		s.StartManager(apiServer.Env.Config, opts)
		return nil
	}))
}

// waitServed waits until the CRD is established.
func waitServed() error {
	return wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		c, err := client.New(apiServer.Env.Config, client.Options{})
		if err != nil {
			return false, err
		}
		if err := c.Get(ctx, client.ObjectKey{Name: "podgroups.scheduling.volcano.sh"}, crd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
