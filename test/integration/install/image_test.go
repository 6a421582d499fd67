//go:build integration

package install

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestImageTagDefaultsToAppVersion: with only image.repository set, as
// docs/install.md tells, the manager and the node agent run
// <repository>:<appVersion>, the tag `make image` gives the image.
func TestImageTagDefaultsToAppVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir(), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil || chart.AppVersion == "" {
		t.Fatalf("Chart.yaml has no appVersion: %v", err)
	}
	objs := decode(t, helmTemplate(t, valueSets["default"], "--set", "image.repository=registry.example.com/platform/backfill"))
	want := "registry.example.com/platform/backfill:" + chart.AppVersion
	pods := map[string]corev1.PodSpec{
		"the manager":    deploymentOf(t, objs).Spec.Template.Spec,
		"the node agent": daemonSetOf(t, objs).Spec.Template.Spec,
	}
	for who, pod := range pods {
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			if c.Image != want {
				t.Errorf("%s's container %s runs %q, want %q", who, c.Name, c.Image, want)
			}
		}
	}
}
