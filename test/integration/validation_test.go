//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

const (
	ps        = kubeflowv1.ReplicaTypePS
	worker    = kubeflowv1.ReplicaTypeWorker
	chief     = kubeflowv1.ReplicaTypeChief
	master    = kubeflowv1.ReplicaTypeMaster
	evaluator = kubeflowv1.ReplicaTypeEvaluator
)

// distributedTFJob is the job of examples/tfjob-distributed.yaml
// (2 parameter servers, 4 GPU workers), the valid base that every
// rejection case breaks in one way.
func distributedTFJob(namespace, name string) *kubeflowv1.TFJob {
	return &kubeflowv1.TFJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: kubeflowv1.TFJobSpec{
			TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
				ps: replicaSpec(2, kubeflowv1.RestartPolicyOnFailure, corev1.ResourceRequirements{
					Requests: resources("2", "4Gi", ""),
				}),
				worker: replicaSpec(4, kubeflowv1.RestartPolicyOnFailure, corev1.ResourceRequirements{
					Limits:   resources("4", "8Gi", "1"),
					Requests: resources("2", "4Gi", "1"),
				}),
			},
		},
	}
}

func replicaSpec(replicas int32, restart kubeflowv1.RestartPolicy, res corev1.ResourceRequirements) *kubeflowv1.ReplicaSpec {
	return &kubeflowv1.ReplicaSpec{
		Replicas:      ptr.To(replicas),
		RestartPolicy: restart,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      kubeflowv1.ContainerName,
			Image:     "registry.example.com/ml/train:latest",
			Resources: res,
		}}}},
	}
}

func resources(cpu, memory, gpus string) corev1.ResourceList {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	if gpus != "" {
		l["nvidia.com/gpu"] = resource.MustParse(gpus)
	}
	return l
}

// withReplica adds a replica spec of type t with one tensorflow container.
func withReplica(job *kubeflowv1.TFJob, t kubeflowv1.ReplicaType, replicas int32) *kubeflowv1.ReplicaSpec {
	spec := replicaSpec(replicas, kubeflowv1.RestartPolicyOnFailure, corev1.ResourceRequirements{})
	job.Spec.TFReplicaSpecs[t] = spec
	return spec
}

// renameReplica moves a replica spec to another key, e.g. Worker → worker.
func renameReplica(job *kubeflowv1.TFJob, from, to kubeflowv1.ReplicaType) {
	job.Spec.TFReplicaSpecs[to] = job.Spec.TFReplicaSpecs[from]
	delete(job.Spec.TFReplicaSpecs, from)
}

// tensorflowContainer is the first container of a replica.
func tensorflowContainer(job *kubeflowv1.TFJob, t kubeflowv1.ReplicaType) *corev1.Container {
	return &job.Spec.TFReplicaSpecs[t].Template.Spec.Containers[0]
}

// nameOfLength is a valid job name of exactly n characters.
func nameOfLength(n int) string {
	return "j" + strings.Repeat("a", n-1)
}

func schedulingPolicy(job *kubeflowv1.TFJob) *kubeflowv1.SchedulingPolicy {
	if job.Spec.RunPolicy.SchedulingPolicy == nil {
		job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{}
	}
	return job.Spec.RunPolicy.SchedulingPolicy
}

// createRaw sends job to the apiserver as JSON after an optional edit of
// the JSON itself, for what Go types cannot express (missing required
// fields, wrong JSON types).
func createRaw(ctx context.Context, job *kubeflowv1.TFJob, editJSON func(obj map[string]any)) error {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		return fmt.Errorf("converting the TFJob to unstructured: %w", err)
	}
	if editJSON != nil {
		editJSON(obj)
	}
	return apiServer.Client.Create(ctx, &unstructured.Unstructured{Object: obj})
}

func setJSON(value any, path ...string) func(map[string]any) {
	return func(obj map[string]any) {
		if err := unstructured.SetNestedField(obj, value, path...); err != nil {
			panic(fmt.Sprintf("setting %v: %v", path, err))
		}
	}
}

func removeJSON(path ...string) func(map[string]any) {
	return func(obj map[string]any) { unstructured.RemoveNestedField(obj, path...) }
}

// TestValidationRejectsMalformedTFJobs sends malformed TFJobs to the real
// apiserver: each must be refused as Invalid, with the path of the field at
// fault and words that say how to fix it, and none may be stored.
func TestValidationRejectsMalformedTFJobs(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()

	cases := map[string]struct {
		mutate      func(job *kubeflowv1.TFJob)
		editJSON    func(obj map[string]any)
		wantField   string
		wantMessage string
	}{
		// Replica specs: which types, how many.
		"no replica specs (empty map)": {
			mutate: func(j *kubeflowv1.TFJob) {
				j.Spec.TFReplicaSpecs = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}
			},
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "should have at least 1 properties",
		},
		"no replica specs (field missing)": {
			editJSON:    removeJSON("spec", "tfReplicaSpecs"),
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "Required value",
		},
		"no spec at all": {
			editJSON:    removeJSON("spec"),
			wantField:   "spec",
			wantMessage: "Required value",
		},
		"unknown replica type key": {
			mutate:      func(j *kubeflowv1.TFJob) { renameReplica(j, ps, "Launcher") },
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "keys must be PS, Worker, Chief, Master or Evaluator",
		},
		"replica type key misspelled": {
			mutate:      func(j *kubeflowv1.TFJob) { renameReplica(j, worker, "Workers") },
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "keys must be PS, Worker, Chief, Master or Evaluator",
		},
		"negative replicas": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.TFReplicaSpecs[worker].Replicas = ptr.To[int32](-1) },
			wantField:   "spec.tfReplicaSpecs.Worker.replicas",
			wantMessage: "should be greater than or equal to 0",
		},
		"replicas as a string": {
			editJSON:    setJSON("4", "spec", "tfReplicaSpecs", "Worker", "replicas"),
			wantField:   "spec.tfReplicaSpecs.Worker.replicas",
			wantMessage: "must be of type integer",
		},
		"two Chiefs (Chief and chief)": {
			mutate: func(j *kubeflowv1.TFJob) {
				withReplica(j, chief, 1)
				withReplica(j, "chief", 1)
			},
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "names a replica type twice (keys that differ only in case are the same type)",
		},
		"two Worker keys (Worker and worker)": {
			mutate:      func(j *kubeflowv1.TFJob) { withReplica(j, "worker", 2) },
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "names a replica type twice",
		},
		"Chief and Master": {
			mutate: func(j *kubeflowv1.TFJob) {
				withReplica(j, chief, 1)
				withReplica(j, master, 1)
			},
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "may have one Chief or one Master, not both",
		},
		"Chief replicas 2": {
			mutate:      func(j *kubeflowv1.TFJob) { withReplica(j, chief, 2) },
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "Chief/Master replicas must be 0 or 1; use Worker for more replicas",
		},
		"Master replicas 3": {
			mutate:      func(j *kubeflowv1.TFJob) { withReplica(j, master, 3) },
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "Chief/Master replicas must be 0 or 1",
		},

		// Pod templates.
		"no tensorflow container": {
			mutate:      func(j *kubeflowv1.TFJob) { tensorflowContainer(j, worker).Name = "trainer" },
			wantField:   "spec.tfReplicaSpecs[Worker].template",
			wantMessage: "must include a container named tensorflow",
		},
		"empty container list": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.TFReplicaSpecs[ps].Template.Spec.Containers = []corev1.Container{} },
			wantField:   "spec.tfReplicaSpecs[PS].template",
			wantMessage: "must include a container named tensorflow",
		},
		"template without pod spec": {
			editJSON:    removeJSON("spec", "tfReplicaSpecs", "Worker", "template", "spec"),
			wantField:   "spec.tfReplicaSpecs[Worker].template",
			wantMessage: "must include a container named tensorflow",
		},
		"tensorflow container without image": {
			mutate:      func(j *kubeflowv1.TFJob) { tensorflowContainer(j, worker).Image = "" },
			wantField:   "spec.tfReplicaSpecs[Worker].template",
			wantMessage: "needs an image",
		},
		"sidecar container without image": {
			mutate: func(j *kubeflowv1.TFJob) {
				spec := &j.Spec.TFReplicaSpecs[ps].Template.Spec
				spec.Containers = append(spec.Containers, corev1.Container{Name: "log-shipper"})
			},
			wantField:   "spec.tfReplicaSpecs[PS].template",
			wantMessage: "needs an image",
		},
		"TF_CONFIG set by hand": {
			mutate: func(j *kubeflowv1.TFJob) {
				tensorflowContainer(j, worker).Env = []corev1.EnvVar{{Name: "TF_CONFIG", Value: `{"cluster":{}}`}}
			},
			wantField:   "spec.tfReplicaSpecs[Worker].template",
			wantMessage: "TF_CONFIG is written by the operator: remove it",
		},
		"too many containers (65)": {
			mutate: func(j *kubeflowv1.TFJob) {
				spec := &j.Spec.TFReplicaSpecs[worker].Template.Spec
				for i := 1; i < 65; i++ {
					spec.Containers = append(spec.Containers, corev1.Container{Name: fmt.Sprintf("sidecar-%d", i), Image: "busybox"})
				}
			},
			wantField:   "spec.tfReplicaSpecs.Worker.template.spec.containers",
			wantMessage: "must have at most 64 items",
		},
		"two containers named tensorflow": {
			mutate: func(j *kubeflowv1.TFJob) {
				spec := &j.Spec.TFReplicaSpecs[worker].Template.Spec
				spec.Containers = append(spec.Containers, spec.Containers[0])
			},
			wantField:   "spec.tfReplicaSpecs[Worker].template.spec.containers[1]",
			wantMessage: "Duplicate value",
		},
		"container name longer than 63 characters": {
			mutate: func(j *kubeflowv1.TFJob) {
				spec := &j.Spec.TFReplicaSpecs[worker].Template.Spec
				spec.Containers = append(spec.Containers, corev1.Container{Name: strings.Repeat("c", 64), Image: "busybox"})
			},
			wantField: "spec.tfReplicaSpecs.Worker.template.spec.containers[1].name",
			// The apiserver's own words, which changed after 1.30 ("longer
			// than 63", now "more than 63 bytes").
			wantMessage: "Too long: may not be",
		},

		// Restart policies.
		"restartPolicy Always on Worker without a Chief": {
			mutate: func(j *kubeflowv1.TFJob) {
				j.Spec.TFReplicaSpecs[worker].RestartPolicy = kubeflowv1.RestartPolicyAlways
			},
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "restartPolicy Always is not allowed on the Chief or Master, nor on Worker when there is no Chief or Master",
		},
		"restartPolicy Always on lowercase worker without a Chief": {
			mutate: func(j *kubeflowv1.TFJob) {
				renameReplica(j, worker, "worker")
				j.Spec.TFReplicaSpecs["worker"].RestartPolicy = kubeflowv1.RestartPolicyAlways
			},
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "use OnFailure or ExitCode",
		},
		"restartPolicy Always on Chief": {
			mutate: func(j *kubeflowv1.TFJob) {
				withReplica(j, chief, 1).RestartPolicy = kubeflowv1.RestartPolicyAlways
			},
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "restartPolicy Always is not allowed on the Chief or Master, nor on Worker when there is no Chief or Master",
		},
		"restartPolicy Always on Master": {
			mutate: func(j *kubeflowv1.TFJob) {
				withReplica(j, master, 1).RestartPolicy = kubeflowv1.RestartPolicyAlways
			},
			wantField:   "spec.tfReplicaSpecs",
			wantMessage: "use OnFailure or ExitCode",
		},
		"bad restartPolicy value": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.TFReplicaSpecs[worker].RestartPolicy = "Sometimes" },
			wantField:   "spec.tfReplicaSpecs.Worker.restartPolicy",
			wantMessage: `supported values: "Always", "OnFailure", "Never", "ExitCode"`,
		},
		"restartPolicy in the wrong case": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.TFReplicaSpecs[ps].RestartPolicy = "onFailure" },
			wantField:   "spec.tfReplicaSpecs.PS.restartPolicy",
			wantMessage: `Unsupported value: "onFailure"`,
		},

		// Policies.
		"bad cleanPodPolicy": {
			mutate: func(j *kubeflowv1.TFJob) {
				j.Spec.RunPolicy.CleanPodPolicy = ptr.To[kubeflowv1.CleanPodPolicy]("Finished")
			},
			wantField:   "spec.runPolicy.cleanPodPolicy",
			wantMessage: `supported values: "All", "Running", "None"`,
		},
		"bad successPolicy": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.SuccessPolicy = ptr.To[kubeflowv1.SuccessPolicy]("AnyWorker") },
			wantField:   "spec.successPolicy",
			wantMessage: `supported values: "", "AllWorkers"`,
		},
		"bad managedBy": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ManagedBy = ptr.To("kueue.x-k8s.io/kueue") },
			wantField:   "spec.runPolicy.managedBy",
			wantMessage: `supported values: "kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"`,
		},
		"negative backoffLimit": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.BackoffLimit = ptr.To[int32](-1) },
			wantField:   "spec.runPolicy.backoffLimit",
			wantMessage: "should be greater than or equal to 0",
		},
		"activeDeadlineSeconds 0": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ActiveDeadlineSeconds = ptr.To[int64](0) },
			wantField:   "spec.runPolicy.activeDeadlineSeconds",
			wantMessage: "should be greater than or equal to 1",
		},
		"negative activeDeadlineSeconds": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ActiveDeadlineSeconds = ptr.To[int64](-60) },
			wantField:   "spec.runPolicy.activeDeadlineSeconds",
			wantMessage: "should be greater than or equal to 1",
		},
		"negative ttlSecondsAfterFinished": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.TTLSecondsAfterFinished = ptr.To[int32](-1) },
			wantField:   "spec.runPolicy.ttlSecondsAfterFinished",
			wantMessage: "should be greater than or equal to 0",
		},
		"negative scheduleTimeoutSeconds": {
			mutate:      func(j *kubeflowv1.TFJob) { schedulingPolicy(j).ScheduleTimeoutSeconds = ptr.To[int32](-5) },
			wantField:   "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds",
			wantMessage: "should be greater than or equal to 0",
		},
		"minAvailable 0": {
			mutate:      func(j *kubeflowv1.TFJob) { schedulingPolicy(j).MinAvailable = ptr.To[int32](0) },
			wantField:   "spec.runPolicy.schedulingPolicy.minAvailable",
			wantMessage: "should be greater than or equal to 1",
		},
		"suspend as a string": {
			editJSON:    setJSON("yes", "spec", "runPolicy", "suspend"),
			wantField:   "spec.runPolicy.suspend",
			wantMessage: "must be of type boolean",
		},

		// Names: pods and services are named <name>-<type>-<index>, and a
		// service name is a DNS-1035 label of at most 63 characters.
		"name with uppercase letters": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Name = "TFJob-Distributed" },
			wantField:   "metadata.name",
			wantMessage: "must consist of lower case alphanumeric characters",
		},
		"name starts with a digit": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Name = "1-tfjob" },
			wantField:   "metadata.name",
			wantMessage: "must be a DNS-1035 label",
		},
		"name contains a dot": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Name = "tfjob.distributed" },
			wantField:   "metadata.name",
			wantMessage: "must be a DNS-1035 label",
		},
		"name ends with '-'": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Name = "tfjob-" },
			wantField:   "metadata.name",
			wantMessage: "must start and end with an alphanumeric character",
		},
		// 52 + len("-worker-3") = 61 fits; 52 + len("-evaluator-0") = 64
		// does not: the Evaluator makes the name too long.
		"name too long for the Evaluator's pod name": {
			mutate: func(j *kubeflowv1.TFJob) {
				j.Name = nameOfLength(52)
				withReplica(j, evaluator, 1)
			},
			wantField:   "metadata.name",
			wantMessage: "must fit in 63 characters; shorten metadata.name",
		},
		// 55 + len("-worker-3") = 64, one over.
		"name one character over the limit": {
			mutate:      func(j *kubeflowv1.TFJob) { j.Name = nameOfLength(55) },
			wantField:   "metadata.name",
			wantMessage: "metadata.name is too long",
		},
		// 54 + len("-worker-3") = 63 is accepted (see
		// TestValidationAcceptsWellFormedTFJobs), 54 + len("-worker-10") is not.
		"name fits but the highest worker index does not": {
			mutate: func(j *kubeflowv1.TFJob) {
				j.Name = nameOfLength(54)
				j.Spec.TFReplicaSpecs[worker].Replicas = ptr.To[int32](11)
			},
			wantField:   "metadata.name",
			wantMessage: "<name>-<replica type>-<index> must fit in 63 characters",
		},
	}
	if len(cases) < 40 {
		t.Fatalf("The table has %d cases, want at least 40", len(cases))
	}

	i := 0
	for name, tc := range cases {
		i++
		// A name per case, so that a case wrongly accepted cannot make
		// the next ones fail with AlreadyExists.
		jobName := fmt.Sprintf("rejected-%d", i)
		t.Run(name, func(t *testing.T) {
			job := distributedTFJob(ns, jobName)
			if tc.mutate != nil {
				tc.mutate(job)
			}
			err := createRaw(ctx, job, tc.editJSON)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("Create: got error %v, want an Invalid error", err)
			}
			t.Logf("Rejected: %v", err)
			wantCause(t, err, tc.wantField, tc.wantMessage)
		})
	}

	var jobs kubeflowv1.TFJobList
	if err := apiServer.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatalf("Listing TFJobs: %v", err)
	}
	if len(jobs.Items) != 0 {
		t.Errorf("Rejected creates stored %d TFJobs, want none: first is %s", len(jobs.Items), jobs.Items[0].Name)
	}
}

// wantCause checks that an Invalid error names field and, for that same
// field, says message: the text a person reads, and the structured cause
// that kubectl and other clients show next to the field.
func wantCause(t *testing.T, err error, field, message string) {
	t.Helper()
	// The apiserver writes each cause as "<field path>: <reason>".
	for _, want := range []string{field + ": ", message} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("The error does not contain %q:\n%v", want, err)
		}
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("The error has no details: %#v", err)
	}
	causes := status.Status().Details.Causes
	for _, c := range causes {
		if c.Field == field && strings.Contains(c.Message, message) {
			return
		}
	}
	t.Errorf("No cause for field %q says %q; causes are %+v", field, message, causes)
}

// TestValidationRejectsChangesToImmutableFields updates stored TFJobs in
// ways the CRD forbids: each update must be refused as Invalid and leave the
// stored job as it was.
func TestValidationRejectsChangesToImmutableFields(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()

	cases := map[string]struct {
		initial     func(job *kubeflowv1.TFJob)
		update      func(job *kubeflowv1.TFJob)
		wantField   string
		wantMessage string
	}{
		"managedBy unset to multikueue": {
			update:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.ManagedByMultiKueue) },
			wantField:   "spec.runPolicy.managedBy",
			wantMessage: "spec.runPolicy.managedBy is immutable: delete and recreate the TFJob",
		},
		"managedBy multikueue to training-operator": {
			initial:     func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.ManagedByMultiKueue) },
			update:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.ManagedByTrainingOperator) },
			wantField:   "spec.runPolicy.managedBy",
			wantMessage: "spec.runPolicy.managedBy is immutable: delete and recreate the TFJob",
		},
		"managedBy training-operator to unset": {
			initial:     func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.ManagedByTrainingOperator) },
			update:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ManagedBy = nil },
			wantField:   "spec.runPolicy.managedBy",
			wantMessage: "spec.runPolicy.managedBy is immutable",
		},
		"schedulingPolicy.queue changed": {
			initial:     func(j *kubeflowv1.TFJob) { schedulingPolicy(j).Queue = "team-a" },
			update:      func(j *kubeflowv1.TFJob) { schedulingPolicy(j).Queue = "team-b" },
			wantField:   "spec.runPolicy.schedulingPolicy.queue",
			wantMessage: "spec.runPolicy.schedulingPolicy.queue is immutable",
		},
		"schedulingPolicy.queue set after creation": {
			update:      func(j *kubeflowv1.TFJob) { schedulingPolicy(j).Queue = "team-b" },
			wantField:   "spec.runPolicy.schedulingPolicy.queue",
			wantMessage: "spec.runPolicy.schedulingPolicy.queue is immutable",
		},
		"schedulingPolicy.queue removed": {
			initial:     func(j *kubeflowv1.TFJob) { schedulingPolicy(j).Queue = "team-a" },
			update:      func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.SchedulingPolicy = nil },
			wantField:   "spec.runPolicy.schedulingPolicy.queue",
			wantMessage: "spec.runPolicy.schedulingPolicy.queue is immutable",
		},
	}

	i := 0
	for name, tc := range cases {
		i++
		jobName := fmt.Sprintf("immutable-%d", i)
		t.Run(name, func(t *testing.T) {
			job := distributedTFJob(ns, jobName)
			if tc.initial != nil {
				tc.initial(job)
			}
			if err := apiServer.Client.Create(ctx, job); err != nil {
				t.Fatalf("Creating the initial TFJob: %v", err)
			}
			stored := job.DeepCopy()

			tc.update(job)
			err := apiServer.Client.Update(ctx, job)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("Update: got error %v, want an Invalid error", err)
			}
			wantCause(t, err, tc.wantField, tc.wantMessage)

			got := &kubeflowv1.TFJob{}
			if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
				t.Fatalf("Getting the TFJob: %v", err)
			}
			if got.ResourceVersion != stored.ResourceVersion {
				t.Errorf("The rejected update changed the stored TFJob: resourceVersion %s, want %s", got.ResourceVersion, stored.ResourceVersion)
			}
		})
	}
}

// TestValidationAcceptsValidUpdates proves the immutability rules do not
// freeze the rest of the spec.
func TestValidationAcceptsValidUpdates(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	job := distributedTFJob(ns, "resized")
	job.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.ManagedByTrainingOperator)
	schedulingPolicy(job).Queue = "team-a"
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatalf("Creating the TFJob: %v", err)
	}

	job.Spec.TFReplicaSpecs[worker].Replicas = ptr.To[int32](8)
	job.Spec.RunPolicy.Suspend = ptr.To(true)
	schedulingPolicy(job).MinAvailable = ptr.To[int32](10)
	if err := apiServer.Client.Update(ctx, job); err != nil {
		t.Fatalf("Update of replicas, suspend and minAvailable: %v", err)
	}

	got := &kubeflowv1.TFJob{}
	if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatalf("Getting the TFJob: %v", err)
	}
	if r := got.Spec.TFReplicaSpecs[worker].Replicas; r == nil || *r != 8 {
		t.Errorf("Worker replicas after the update = %v, want 8", r)
	}
	if s := got.Spec.RunPolicy.Suspend; s == nil || !*s {
		t.Errorf("suspend after the update = %v, want true", s)
	}
}

// TestValidationAcceptsWellFormedTFJobs proves the rules do not reject
// what they should let through, and that the apiserver fills in the
// defaults.
func TestValidationAcceptsWellFormedTFJobs(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()

	cases := map[string]struct {
		mutate func(job *kubeflowv1.TFJob)
		check  func(t *testing.T, got *kubeflowv1.TFJob)
	}{
		"the distributed base job": {},
		"defaults where unset": {
			mutate: func(j *kubeflowv1.TFJob) {
				for _, spec := range j.Spec.TFReplicaSpecs {
					spec.Replicas = nil
					spec.RestartPolicy = ""
				}
			},
			check: func(t *testing.T, got *kubeflowv1.TFJob) {
				wantDefaults(t, got, ps, nil, "")
				wantDefaults(t, got, worker, nil, "")
				if s := got.Spec.RunPolicy.Suspend; s == nil || *s {
					t.Errorf("spec.runPolicy.suspend = %v, want the default false", s)
				}
			},
		},
		"lowercase keys worker and ps": {
			mutate: func(j *kubeflowv1.TFJob) {
				renameReplica(j, worker, "worker")
				renameReplica(j, ps, "ps")
				j.Spec.TFReplicaSpecs["ps"].Replicas = nil
				j.Spec.TFReplicaSpecs["worker"].RestartPolicy = ""
			},
			check: func(t *testing.T, got *kubeflowv1.TFJob) {
				wantDefaults(t, got, "ps", nil, kubeflowv1.RestartPolicyOnFailure)
				wantDefaults(t, got, "worker", ptr.To[int32](4), "")
			},
		},
		"restartPolicy Always on PS": {
			mutate: func(j *kubeflowv1.TFJob) { j.Spec.TFReplicaSpecs[ps].RestartPolicy = kubeflowv1.RestartPolicyAlways },
		},
		"restartPolicy Always on Evaluator": {
			mutate: func(j *kubeflowv1.TFJob) {
				withReplica(j, evaluator, 1).RestartPolicy = kubeflowv1.RestartPolicyAlways
			},
		},
		"restartPolicy Always on Worker beside a Chief": {
			mutate: func(j *kubeflowv1.TFJob) {
				withReplica(j, chief, 1).RestartPolicy = kubeflowv1.RestartPolicyExitCode
				j.Spec.TFReplicaSpecs[worker].RestartPolicy = kubeflowv1.RestartPolicyAlways
			},
		},
		"Master with 0 replicas": {
			mutate: func(j *kubeflowv1.TFJob) { withReplica(j, master, 0) },
		},
		// The longest derived name, <name>-worker-3, is just at the limit.
		"name at the 63-character limit": {
			mutate: func(j *kubeflowv1.TFJob) { j.Name = nameOfLength(54) },
			check: func(t *testing.T, got *kubeflowv1.TFJob) {
				if n := len(got.Name + "-worker-3"); n != 63 {
					t.Errorf("The longest derived name has %d characters, want the limit 63", n)
				}
			},
		},
		// <name>-evaluator-0 has 62 characters and fits.
		"50-character name with an Evaluator": {
			mutate: func(j *kubeflowv1.TFJob) {
				j.Name = nameOfLength(50)
				withReplica(j, evaluator, 1)
			},
		},
		"every run policy set": {
			mutate: func(j *kubeflowv1.TFJob) {
				j.Spec.SuccessPolicy = ptr.To(kubeflowv1.SuccessPolicyAllWorkers)
				j.Spec.RunPolicy = kubeflowv1.RunPolicy{
					CleanPodPolicy:          ptr.To(kubeflowv1.CleanPodPolicyAll),
					TTLSecondsAfterFinished: ptr.To[int32](0),
					ActiveDeadlineSeconds:   ptr.To[int64](1),
					BackoffLimit:            ptr.To[int32](0),
					Suspend:                 ptr.To(true),
					ManagedBy:               ptr.To(kubeflowv1.ManagedByMultiKueue),
					SchedulingPolicy: &kubeflowv1.SchedulingPolicy{
						MinAvailable:           ptr.To[int32](1),
						Queue:                  "team-a",
						PriorityClass:          "offline-training",
						ScheduleTimeoutSeconds: ptr.To[int32](0),
						MinResources:           ptr.To(resources("8", "16Gi", "4")),
					},
				}
			},
		},
		"TF_CONFIG in a sidecar, not in tensorflow": {
			mutate: func(j *kubeflowv1.TFJob) {
				spec := &j.Spec.TFReplicaSpecs[worker].Template.Spec
				spec.Containers = append(spec.Containers, corev1.Container{
					Name: "exporter", Image: "busybox", Env: []corev1.EnvVar{{Name: "TF_CONFIG", Value: "{}"}},
				})
			},
		},
		"64 containers": {
			mutate: func(j *kubeflowv1.TFJob) {
				spec := &j.Spec.TFReplicaSpecs[worker].Template.Spec
				for i := 1; i < 64; i++ {
					spec.Containers = append(spec.Containers, corev1.Container{Name: fmt.Sprintf("sidecar-%d", i), Image: "busybox"})
				}
			},
		},
	}

	i := 0
	for name, tc := range cases {
		i++
		jobName := fmt.Sprintf("accepted-%d", i)
		t.Run(name, func(t *testing.T) {
			job := distributedTFJob(ns, jobName)
			if tc.mutate != nil {
				tc.mutate(job)
			}
			if err := apiServer.Client.Create(ctx, job); err != nil {
				t.Fatalf("Create: %v", err)
			}
			got := &kubeflowv1.TFJob{}
			if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
				t.Fatalf("Getting the TFJob: %v", err)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

// wantDefaults checks that replica type rtype of a stored job has the
// replicas and restartPolicy it was created with, or the CRD's defaults (1
// and Never) where they were unset.
func wantDefaults(t *testing.T, got *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, sent *int32, sentPolicy kubeflowv1.RestartPolicy) {
	t.Helper()
	spec, ok := got.Spec.TFReplicaSpecs[rtype]
	if !ok || spec == nil {
		t.Errorf("The stored TFJob has no replica spec %q; keys are %v", rtype, replicaKeys(got))
		return
	}
	wantReplicas, wantPolicy := int32(1), kubeflowv1.RestartPolicyNever
	if sent != nil {
		wantReplicas = *sent
	}
	if sentPolicy != "" {
		wantPolicy = sentPolicy
	}
	if spec.Replicas == nil || *spec.Replicas != wantReplicas {
		t.Errorf("%s replicas = %v, want %d", rtype, spec.Replicas, wantReplicas)
	}
	if spec.RestartPolicy != wantPolicy {
		t.Errorf("%s restartPolicy = %q, want %q", rtype, spec.RestartPolicy, wantPolicy)
	}
}

func replicaKeys(job *kubeflowv1.TFJob) []kubeflowv1.ReplicaType {
	var keys []kubeflowv1.ReplicaType
	for k := range job.Spec.TFReplicaSpecs {
		keys = append(keys, k)
	}
	return keys
}

// TestValidationAcceptsExampleManifests applies every example TFJob
// unchanged, in the namespace it names, and checks the defaults the
// apiserver fills in.
func TestValidationAcceptsExampleManifests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(framework.ExamplesDir(), "tfjob-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("No tfjob-*.yaml manifests in %s: %v", framework.ExamplesDir(), err)
	}
	ctx := context.Background()
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// Strict: a field of the manifest that the Go types do not
			// know would be dropped silently by the operator.
			var job kubeflowv1.TFJob
			if err := yaml.UnmarshalStrict(data, &job); err != nil {
				t.Fatalf("Decoding %s: %v", file, err)
			}
			if job.Namespace == "" {
				t.Fatalf("%s names no namespace", file)
			}
			sent := job.DeepCopy()
			useNamespace(t, job.Namespace)

			// kubectl validates strictly: unknown fields fail here.
			out := kubectl(t, "apply", "--dry-run=server", "-f", file)
			if !strings.Contains(out, "tfjob.kubeflow.org/"+job.Name+" created (server dry run)") {
				t.Errorf("kubectl apply --dry-run=server -f %s printed %q, want the TFJob created", file, out)
			}

			if err := apiServer.Client.Create(ctx, &job); err != nil {
				t.Fatalf("Creating %s: %v", file, err)
			}
			got := &kubeflowv1.TFJob{}
			if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(&job), got); err != nil {
				t.Fatalf("Getting the TFJob: %v", err)
			}
			if len(got.Spec.TFReplicaSpecs) != len(sent.Spec.TFReplicaSpecs) {
				t.Errorf("Stored replica types %v, want those of the manifest %v", replicaKeys(got), replicaKeys(sent))
			}
			for rtype, spec := range sent.Spec.TFReplicaSpecs {
				wantDefaults(t, got, rtype, spec.Replicas, spec.RestartPolicy)
			}
		})
	}
}

// TestValidationKubectlPrinterColumns checks what `kubectl get tfjob` shows:
// the state (last condition) and age, plus restarts and disruptions with
// -o wide.
func TestValidationKubectlPrinterColumns(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	job := distributedTFJob(ns, "tfjob-columns")
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatalf("Creating the TFJob: %v", err)
	}
	now := metav1.Now()
	job.Status = kubeflowv1.JobStatus{
		Conditions: []kubeflowv1.JobCondition{
			{Type: kubeflowv1.JobCreated, Status: corev1.ConditionTrue, Reason: "TFJobCreated", LastUpdateTime: now, LastTransitionTime: now},
			{Type: kubeflowv1.JobRunning, Status: corev1.ConditionTrue, Reason: "TFJobRunning", LastUpdateTime: now, LastTransitionTime: now},
		},
		Restarts:    2,
		Disruptions: 1,
		Progress:    &kubeflowv1.Progress{Step: 1200, ReportTime: now, CheckpointStep: ptr.To[int64](1000), CheckpointTime: &now},
	}
	if err := apiServer.Client.Status().Update(ctx, job); err != nil {
		t.Fatalf("Updating the status: %v", err)
	}

	out := kubectl(t, "get", "tfjob", "-n", ns)
	t.Logf("kubectl get tfjob:\n%s", out)
	header, row := tableRow(t, out, job.Name)
	// WAITING (and WHY) are empty: no pod waits for capacity.
	wantColumns(t, "kubectl get tfjob", header, []string{"NAME", "STATE", "AGE", "WAITING"})
	if len(row) != 3 || row[1] != "Running" {
		t.Errorf("kubectl get tfjob row = %q, want %s Running <age>", row, job.Name)
	}

	out = kubectl(t, "get", "tfjob", "-n", ns, "-o", "wide")
	t.Logf("kubectl get tfjob -o wide:\n%s", out)
	header, row = tableRow(t, out, job.Name)
	wantColumns(t, "kubectl get tfjob -o wide", header, []string{"NAME", "STATE", "AGE", "WAITING", "RESTARTS", "DISRUPTIONS", "STEP", "CHECKPOINT", "WHY"})
	if len(row) != 7 || row[1] != "Running" || row[3] != "2" || row[4] != "1" || row[5] != "1200" || !strings.HasSuffix(row[6], "s") {
		t.Errorf("kubectl get tfjob -o wide row = %q, want %s Running <age> 2 1 1200 <checkpoint age>", row, job.Name)
	}
}

// tableRow splits kubectl's table output into its header and the row of
// the named object.
func tableRow(t *testing.T, out, name string) (header, row []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("kubectl printed no rows:\n%s", out)
	}
	for _, line := range lines[1:] {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] == name {
			return strings.Fields(lines[0]), fields
		}
	}
	t.Fatalf("kubectl printed no row for %s:\n%s", name, out)
	return nil, nil
}

func wantColumns(t *testing.T, command string, got, want []string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s columns = %q, want %q", command, got, want)
	}
}
