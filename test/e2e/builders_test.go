//go:build e2e

package e2e

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// trainingImage is never pulled: kwok runs the pods.
const trainingImage = "registry.example.com/ml/train:latest"

// tfJobWrapper builds the TFJobs of the suite: Workers of one size whose
// simulated training runs for a set time.
type tfJobWrapper struct{ kubeflowv1.TFJob }

// makeTFJob is a TFJob of one Worker requesting 1 CPU and 1 GiB, restart
// policy Never.
func makeTFJob(ns, name string) *tfJobWrapper {
	w := &tfJobWrapper{kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubeflowv1.TFJobSpec{
			TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
				kubeflowv1.ReplicaTypeWorker: {
					Replicas:      ptr.To[int32](1),
					RestartPolicy: kubeflowv1.RestartPolicyNever,
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{
							Name:  kubeflowv1.ContainerName,
							Image: trainingImage,
							Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("1"),
								corev1.ResourceMemory: resource.MustParse("1Gi"),
							}},
						}}},
					},
				},
			},
		},
	}}
	return w
}

func (w *tfJobWrapper) worker() *kubeflowv1.ReplicaSpec {
	return w.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker]
}

// OnRequestedCapacity opts the job out of reclaimed capacity: its pods
// keep their cpu and memory requests and compete with online pods for
// them by priority, which is what the priority tests are about.
func (w *tfJobWrapper) OnRequestedCapacity() *tfJobWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[colocation.CapacityAnnotation] = colocation.CapacityRequested
	return w
}

// Workers sets the number of Workers.
func (w *tfJobWrapper) Workers(n int32) *tfJobWrapper {
	w.worker().Replicas = ptr.To(n)
	return w
}

// CPU sets the CPU each Worker requests.
func (w *tfJobWrapper) CPU(q string) *tfJobWrapper {
	w.worker().Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(q)
	return w
}

// GPUs sets the nvidia.com/gpu each Worker requests and is limited to.
func (w *tfJobWrapper) GPUs(n int64) *tfJobWrapper {
	res := &w.worker().Template.Spec.Containers[0].Resources
	q := *resource.NewQuantity(n, resource.DecimalSI)
	res.Requests[kwok.GPUResource] = q
	res.Limits = corev1.ResourceList{kwok.GPUResource: q}
	return w
}

// RestartPolicy sets the Workers' restart policy.
func (w *tfJobWrapper) RestartPolicy(p kubeflowv1.RestartPolicy) *tfJobWrapper {
	w.worker().RestartPolicy = p
	return w
}

// BackoffLimit sets runPolicy.backoffLimit.
func (w *tfJobWrapper) BackoffLimit(n int32) *tfJobWrapper {
	w.Spec.RunPolicy.BackoffLimit = ptr.To(n)
	return w
}

// SimDuration makes the simulated training of every Worker run for d (a
// Go duration), then exit 0.
func (w *tfJobWrapper) SimDuration(d string) *tfJobWrapper {
	w.worker().Template.Annotations[kwok.SimDurationAnnotation] = d
	return w
}

// SimExitCode makes every Worker exit with code once its duration passed.
func (w *tfJobWrapper) SimExitCode(code string) *tfJobWrapper {
	w.worker().Template.Annotations[kwok.SimExitCodeAnnotation] = code
	return w
}

// TemplatePriorityClass sets priorityClassName in the Worker template, as
// the seed's manifests do.
func (w *tfJobWrapper) TemplatePriorityClass(name string) *tfJobWrapper {
	w.worker().Template.Spec.PriorityClassName = name
	return w
}

// SchedulingPriorityClass sets runPolicy.schedulingPolicy.priorityClass.
func (w *tfJobWrapper) SchedulingPriorityClass(name string) *tfJobWrapper {
	if w.Spec.RunPolicy.SchedulingPolicy == nil {
		w.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{}
	}
	w.Spec.RunPolicy.SchedulingPolicy.PriorityClass = name
	return w
}

// Obj is a copy of the TFJob built.
func (w *tfJobWrapper) Obj() *kubeflowv1.TFJob {
	return w.DeepCopy()
}

// makeOnline is an online Deployment: pods labelled app=name with no
// PriorityClass (priority 0, as most online services run), each
// requesting cpu and 1 GiB, like examples/online-web.yaml.
func makeOnline(ns, name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: maps.Clone(labels),
					Annotations: map[string]string{
						kwok.UsageCPUAnnotation:    "500m",
						kwok.UsageMemoryAnnotation: "512Mi",
					},
				},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "web",
					Image: "registry.example.com/shop/web:1.0",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse(cpu),
						corev1.ResourceMemory: resource.MustParse("1Gi"),
					}},
				}}},
			},
		},
	}
}
