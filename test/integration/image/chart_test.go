//go:build integration

package image

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/test/framework"
)

// TestChartRunsTheImage renders the chart as docs/install.md tells (only
// image.repository set; the alert relay on, so that all three of its
// workloads render) and, for every container that runs the image, finds
// its command on the image's PATH and runs the image's own binary with
// the container's command and arguments and --help: the subcommand and
// every flag the chart passes exist in the binary the image holds, and
// the tag the chart asks for is the one the image carries.
func TestChartRunsTheImage(t *testing.T) {
	const repository = "registry.example.com/platform/backfill"
	out, err := framework.Helm("template", "backfill", filepath.Join(framework.RepoRoot(), "charts", "backfill"),
		"--namespace", "backfill-system",
		"--set", "image.repository="+repository,
		"--set", "alerting.relay.enabled=true",
		"--set", "alerting.relay.dingtalk.urlSecret.name=dingtalk-robot")
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	binary := filepath.Join(t.TempDir(), "backfill")
	if err := os.WriteFile(binary, built.binary, 0o555); err != nil {
		t.Fatal(err)
	}
	want := repository + ":" + built.config.Config.Labels["org.opencontainers.image.version"]
	ran := 0
	for _, pod := range podSpecs(t, out) {
		for _, c := range append(pod.spec.InitContainers, pod.spec.Containers...) {
			if !strings.HasPrefix(c.Image, repository+":") {
				continue
			}
			if c.Image != want {
				t.Errorf("%s's container %s runs %s, but the image is %s", pod.name, c.Name, c.Image, want)
			}
			command := c.Command
			if len(command) == 0 {
				command = built.config.Config.Entrypoint
			}
			if onPath(command[0]) != built.binaryPath {
				t.Errorf("%s's container %s runs %q, which is not %s on the image's PATH %v",
					pod.name, c.Name, command[0], built.binaryPath, built.config.Config.Env)
				continue
			}
			args := append(slices.Clone(command[1:]), c.Args...)
			cmd := exec.Command(binary, append(args, "--help")...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("%s's container %s: the image's binary refuses %v: %v\n%s", pod.name, c.Name, args, err, stderr.String())
			}
			ran++
		}
	}
	if ran < 3 {
		t.Errorf("Ran %d of the chart's containers, want the manager's, the node agent's and the relay's", ran)
	}
}

// onPath is where the image's PATH finds command, or command itself when
// it is a path.
func onPath(command string) string {
	if strings.Contains(command, "/") {
		return strings.TrimPrefix(command, "/")
	}
	for _, env := range built.config.Config.Env {
		dirs, ok := strings.CutPrefix(env, "PATH=")
		if !ok {
			continue
		}
		for _, dir := range strings.Split(dirs, ":") {
			file := strings.TrimPrefix(path.Join(dir, command), "/")
			if file == built.binaryPath {
				return file
			}
		}
	}
	return ""
}

type namedPodSpec struct {
	name string
	spec corev1.PodSpec
}

// podSpecs are the pod templates of the Deployments and DaemonSets that a
// rendering holds.
func podSpecs(t *testing.T, rendered []byte) []namedPodSpec {
	t.Helper()
	var pods []namedPodSpec
	for _, doc := range strings.Split(string(rendered), "\n---") {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("The rendering is not YAML: %v", err)
		}
		switch head.Kind {
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
				t.Fatal(err)
			}
			pods = append(pods, namedPodSpec{"Deployment " + d.Name, d.Spec.Template.Spec})
		case "DaemonSet":
			var d appsv1.DaemonSet
			if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
				t.Fatal(err)
			}
			pods = append(pods, namedPodSpec{"DaemonSet " + d.Name, d.Spec.Template.Spec})
		}
	}
	return pods
}
