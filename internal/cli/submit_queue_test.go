package cli

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/backfill-dev/backfill/internal/queueing"
)

func TestCheckQueueName(t *testing.T) {
	for name, want := range map[string]string{
		"":         "",
		"training": "",
		"team.gpu": "",
		"Training": `--queue "Training" is not a LocalQueue name: a lowercase RFC 1123 subdomain`,
		"a b":      `--queue "a b" is not a LocalQueue name`,
	} {
		err := checkQueueName(name)
		switch {
		case want == "" && err != nil:
			t.Errorf("checkQueueName(%q) = %v, want nil", name, err)
		case want != "" && (err == nil || !isUsageError(err) || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("checkQueueName(%q) = %v, want a usage error starting %q", name, err, want)
		}
	}
}

func TestQueueManifests(t *testing.T) {
	job := func(name, queue string) manifest {
		u := &unstructured.Unstructured{}
		u.SetName(name)
		if queue != "" {
			u.SetLabels(map[string]string{queueing.QueueNameLabel: queue, "team": "vision"})
		}
		return manifest{where: "jobs.yaml document 1", object: u}
	}
	manifests := []manifest{job("a", ""), job("b", "training")}
	if err := queueManifests(manifests, "training"); err != nil {
		t.Fatalf("queueManifests: %v", err)
	}
	for _, m := range manifests {
		if got := m.object.GetLabels()[queueing.QueueNameLabel]; got != "training" {
			t.Errorf("TFJob %s queue label %q, want training", m.object.GetName(), got)
		}
	}
	if got := manifests[1].object.GetLabels()["team"]; got != "vision" {
		t.Errorf("TFJob b lost its own label: team=%q", got)
	}

	err := queueManifests([]manifest{job("c", "other")}, "training")
	want := "jobs.yaml document 1: TFJob c is labelled kueue.x-k8s.io/queue-name=other but --queue says training: drop --queue or the label"
	if err == nil || !isUsageError(err) || err.Error() != want {
		t.Errorf("queueManifests over another queue = %v, want the usage error %q", err, want)
	}
}
