//go:build integration

package install

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/test/framework"
)

// clusterReady prepares the apiserver once: the install namespace and the
// dashboards' one, both held to the restricted Pod Security level (enforce
// and warn, so that a Deployment whose pods would be refused draws a
// warning); the node agent's namespaces of the value sets, at the
// privileged level the chart and config/nodeagent give them (a dry run
// creates no namespace for the objects in it); and the stand-in
// monitoring and cert-manager CRDs of testdata.
var clusterReady = sync.OnceValue(func() error {
	c := apiServer.Client
	levels := map[string]string{namespace: "restricted", "monitoring": "restricted",
		nodeAgentNamespace: "privileged", customNodeAgentNamespace: "privileged"}
	for name, level := range levels {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": level,
			"pod-security.kubernetes.io/warn":    level,
		}}}
		if err := c.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	_, err := envtest.InstallCRDs(apiServer.Env.Config, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join("testdata", "monitoring-crds.yaml"), filepath.Join("testdata", "cert-manager-crds.yaml")},
		ErrorIfPathMissing: true,
	})
	return err
})

// dryRun applies a manifest with server-side apply in dry-run mode and
// returns kubectl's warnings.
func dryRun(t *testing.T, manifest []byte) string {
	t.Helper()
	if err := clusterReady(); err != nil {
		t.Fatalf("Preparing the apiserver: %v", err)
	}
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(framework.BinDir(), "kubectl"), "--kubeconfig", kubeconfig,
		"apply", "--server-side", "--dry-run=server", "--field-manager=backfill-install-test", "-f", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl apply --server-side --dry-run=server: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	return stderr.String()
}

// Every rendering of the chart, and the kustomize install, is accepted by
// the apiserver, and no Deployment draws a Pod Security warning at the
// restricted level. The monitoring.coreos.com and cert-manager.io kinds
// are checked against the stand-in CRDs of testdata.
func TestServerSideDryRun(t *testing.T) {
	renderings := map[string]func(t *testing.T) []byte{
		"kustomize config/default": func(t *testing.T) []byte {
			return kustomize(t, filepath.Join(framework.RepoRoot(), "config", "default"))
		},
	}
	for name, vs := range valueSets {
		renderings["chart "+name] = func(t *testing.T) []byte { return helmTemplate(t, vs, "--include-crds") }
	}
	for name, render := range renderings {
		t.Run(name, func(t *testing.T) {
			manifest := render(t)
			if len(decode(t, manifest)) == 0 {
				t.Fatal("Nothing rendered")
			}
			if warnings := dryRun(t, manifest); strings.Contains(warnings, "Warning") {
				t.Errorf("The dry-run warned:\n%s", warnings)
			}
		})
	}
}

func TestDryRunSeesPodSecurityViolations(t *testing.T) {
	// The check above can fail: a Deployment that runs as root draws the
	// restricted level's warning.
	manifest := helmTemplate(t, valueSets["default"], "--set", "podSecurityContext.runAsNonRoot=false")
	warnings := dryRun(t, manifest)
	if !strings.Contains(warnings, `violate PodSecurity "restricted`) {
		t.Errorf("Dry-run of a Deployment with runAsNonRoot=false warned %q, want a PodSecurity restricted warning", warnings)
	}
}
