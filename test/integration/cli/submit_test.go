//go:build integration

package cli

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// tfjob is a minimal valid TFJob manifest; replace parts to break it.
func tfjob(name string) string {
	return `apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: ` + name + `
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow:2.15.0
`
}

// jobNames lists the TFJobs of a namespace.
func jobNames(t *testing.T, ns string) []string {
	t.Helper()
	var list kubeflowv1.TFJobList
	if err := apiServer.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, job := range list.Items {
		names = append(names, job.Name)
	}
	return names
}

// Each bad input is refused with exit code 2 and one line naming what is
// wrong, and nothing is created, not even the valid jobs beside it.
func TestSubmitRefusesBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		file  string
		args  []string
		wants []string
	}{
		"unknown field": {
			file:  strings.Replace(tfjob("typo"), "replicas: 2", "replica: 2", 1),
			wants: []string{"document 1", `unknown field "spec.tfReplicaSpecs.Worker.replica"`},
		},
		"enum value the CRD schema refuses": {
			file:  tfjob("ok") + "---\n" + strings.Replace(tfjob("bad-policy"), "OnFailure", "Sometimes", 1),
			wants: []string{"document 2", "TFJob bad-policy is invalid: spec.tfReplicaSpecs.Worker.restartPolicy", `Unsupported value: "Sometimes"`},
		},
		"CEL rule: no tensorflow container": {
			file:  strings.Replace(tfjob("no-tf"), "- name: tensorflow", "- name: trainer", 1),
			wants: []string{"document 1", "spec.tfReplicaSpecs[Worker].template", "must include a container named tensorflow"},
		},
		"not a TFJob": {
			file:  tfjob("ok") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
			wants: []string{"document 2", "ConfigMap", "is not a TFJob"},
		},
		"namespace contradicting -n": {
			file:  strings.Replace(tfjob("elsewhere"), "  name: elsewhere", "  name: elsewhere\n  namespace: other", 1),
			args:  []string{"-n", "NS"},
			wants: []string{"is in namespace other but -n says"},
		},
		"bad --wait-for": {
			file:  tfjob("ok"),
			args:  []string{"--wait-for", "forever"},
			wants: []string{`--wait-for "forever"`, "running", "done"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			path := writeFile(t, "jobs.yaml", tc.file)
			args := []string{"submit", "-f", path, "-n", ns}
			for _, a := range tc.args {
				if a == "NS" {
					a = ns
				}
				args = append(args, a)
			}
			cli(t, "", args...).wantFailure(t, 2, tc.wants...)
			if names := jobNames(t, ns); len(names) != 0 {
				t.Errorf("a refused submit created %v", names)
			}
		})
	}
}

func TestSubmitNeedsAFile(t *testing.T) {
	cli(t, "", "submit").wantFailure(t, 2, "-f FILE")
	cli(t, "", "submit", "-f", "/no/such/file.yaml").wantFailure(t, 2, "cannot read -f /no/such/file.yaml")
	cli(t, "", "submit", "-f", "x.yaml", "--bogus").wantFailure(t, 2, "unknown flag: --bogus")
}

// Several jobs from stdin are applied server-side by the field manager
// "backfill"; submitting them again changes nothing.
func TestSubmitAppliesFromStdin(t *testing.T) {
	ns := newNamespace(t)
	input := tfjob("first") + "---\n" + tfjob("second")
	r := cli(t, input, "submit", "-f", "-", "-n", ns)
	r.wantSuccess(t)
	if want := "tfjob.kubeflow.org/first created\ntfjob.kubeflow.org/second created\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
	var job kubeflowv1.TFJob
	if err := apiServer.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "second"}, &job); err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, mf := range job.ManagedFields {
		managers = append(managers, mf.Manager+"/"+string(mf.Operation))
	}
	if len(managers) != 1 || managers[0] != "backfill/Apply" {
		t.Errorf("managed fields by %v, want only backfill/Apply", managers)
	}

	again := cli(t, input, "submit", "-f", "-", "-n", ns)
	again.wantSuccess(t)
	if want := "tfjob.kubeflow.org/first unchanged\ntfjob.kubeflow.org/second unchanged\n"; again.stdout != want {
		t.Errorf("second submit printed %q, want %q", again.stdout, want)
	}

	changed := strings.Replace(tfjob("first"), "replicas: 2", "replicas: 3", 1)
	r = cli(t, changed, "submit", "-f", "-", "-n", ns)
	r.wantSuccess(t)
	if r.stdout != "tfjob.kubeflow.org/first configured\n" {
		t.Errorf("submitting a change printed %q", r.stdout)
	}
}

func TestSubmitDryRunChangesNothing(t *testing.T) {
	ns := newNamespace(t)
	r := cli(t, tfjob("trial"), "submit", "-f", "-", "-n", ns, "--dry-run")
	r.wantSuccess(t)
	if r.stdout != "tfjob.kubeflow.org/trial valid (dry run)\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	if names := jobNames(t, ns); len(names) != 0 {
		t.Errorf("a dry run created %v", names)
	}
}

// With no operator running, the job never runs: --wait gives up after its
// timeout with exit code 1 and says where the job stands.
func TestSubmitWaitTimesOut(t *testing.T) {
	ns := newNamespace(t)
	r := cli(t, tfjob("stuck"), "submit", "-f", "-", "-n", ns, "--wait", "--timeout", "3s")
	r.wantFailure(t, 1, "timed out after 3s waiting for the TFJobs to be running", "stuck is Pending")
	if !strings.Contains(r.stdout, "stuck: Pending, 0/2 replicas running") {
		t.Errorf("stdout %q has no progress line", r.stdout)
	}
}

// wait follows a job already submitted; with no operator running it
// stays Pending, so wait gives up after its timeout with exit code 1 and
// says where the job stands. A name that is no job is said at once.
func TestWaitForSubmittedJob(t *testing.T) {
	ns := newNamespace(t)
	cli(t, tfjob("queued"), "submit", "-f", "-", "-n", ns).wantSuccess(t)
	r := cli(t, "", "wait", "tfjobs", "queued", "-n", ns, "--for=running", "--timeout", "3s")
	r.wantFailure(t, 1, "timed out after 3s waiting for the TFJobs to be running", "queued is Pending")
	if !strings.Contains(r.stdout, "queued: Pending, 0/2 replicas running") {
		t.Errorf("stdout %q has no progress line", r.stdout)
	}
	cli(t, "", "wait", "queued", "ghost", "-n", ns).wantFailure(t, 1, `TFJob "ghost" not found in namespace `+ns)
	cli(t, "", "wait", "-n", ns).wantFailure(t, 2, "wait takes the names of the TFJobs to wait for")
}
