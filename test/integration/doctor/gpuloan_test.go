//go:build integration

package doctor

import (
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/tide"
	"github.com/backfill-dev/backfill/test/framework"
)

// GPU loans' forecasts as doctor sees them, on the suite's GPU node (pool
// unlabelled): an online GPU Deployment with no forecast is a WARN naming
// it, with the annotation to add; annotated, it is an OK. With KEDA's
// ScaledObject CRD installed (KEDA itself does not run), a ScaledObject
// whose cron trigger does not parse is a WARN of gpu-loan-keda, and its
// workload has no forecast; fixed, both are OK. No pods run: no
// controller makes the Deployments' pods.
func TestDoctorGPULoans(t *testing.T) {
	ns := newNamespace(t, "gpu-loans")
	llm := gpuDeployment(t, ns, "llm")

	r := doctorAny(t, "-n", ns)
	res := r.mustFindOf(t, "gpu-loan-forecast", "WARN", "deployment "+ns+"/llm",
		"online GPU workload deployment gpu-loans/llm (1 GPU(s) per pod, 2 replica(s), pool(s) unlabelled) has no forecast",
		"no backfill.dev/gpu-schedule annotation", "no KEDA ScaledObject with cron triggers", "no replicas history read")
	wantFix(t, res, "kubectl annotate deployment -n gpu-loans llm backfill.dev/gpu-schedule='Europe/Berlin 0 7 * * 1-5 - 0 22 * * 1-5 = 2'")
	r.mustFindOf(t, "gpu-loan-keda", "OK", "", "KEDA is not installed")

	llm.Annotations = map[string]string{tide.ScheduleAnnotation: "Europe/Berlin 0 7 * * 1-5 - 0 22 * * 1-5 = 2"}
	update(t, llm)
	r = doctorAny(t, "-n", ns)
	r.mustFindOf(t, "gpu-loan-forecast", "OK", "", "every online GPU workload of pool(s) unlabelled has a forecast: 1 from the backfill.dev/gpu-schedule annotation")

	// KEDA's CRD, and a ScaledObject whose start has four fields.
	crds := filepath.Join(framework.BinDir(), "keda-manifests", "crd", "keda.sh_scaledobjects.yaml")
	if _, err := envtest.InstallCRDs(apiServer.Env.Config, envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing KEDA's ScaledObject CRD from %s (`make keda-tools` copies it): %v", crds, err)
	}
	gpuDeployment(t, ns, "infer")
	so := scaledObject(ns, "infer", "0 7 * *")
	create(t, so)
	t.Cleanup(func() { deleteObject(t, so) })

	r = doctorAny(t, "-n", ns)
	res = r.mustFindOf(t, "gpu-loan-keda", "WARN", "scaledobject "+ns+"/infer",
		"the cron triggers of ScaledObject gpu-loans/infer, which scales online GPU workload deployment gpu-loans/infer, cannot be read as a schedule: trigger 1:", `"0 7 * *"`)
	wantFix(t, res, "start and end 5 cron fields")
	r.mustFindOf(t, "gpu-loan-forecast", "WARN", "deployment "+ns+"/infer", "ScaledObject gpu-loans/infer whose cron triggers cannot be read (see gpu-loan-keda)")

	if err := unstructured.SetNestedSlice(so.Object, []any{cronTrigger("0 7 * * *")}, "spec", "triggers"); err != nil {
		t.Fatal(err)
	}
	update(t, so)
	r = doctorAny(t, "-n", ns)
	r.mustFindOf(t, "gpu-loan-keda", "OK", "", "1 ScaledObject(s) scale online GPU workloads, 1 with cron triggers that read as schedules")
	r.mustFindOf(t, "gpu-loan-forecast", "OK", "", "1 from the backfill.dev/gpu-schedule annotation, 1 from KEDA cron triggers")
}

// gpuDeployment creates an online Deployment of two pods of one GPU each,
// deleted when the test ends.
func gpuDeployment(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": name}
	gpu := quantities("nvidia.com/gpu", "1")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "vllm/vllm-openai:v0.6.0",
					Resources: corev1.ResourceRequirements{Requests: gpu, Limits: gpu}}}},
			},
		},
	}
	create(t, d)
	t.Cleanup(func() { deleteObject(t, d) })
	return d
}

// scaledObject is a KEDA ScaledObject scaling Deployment target by one
// cron trigger starting at start.
func scaledObject(ns, target, start string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
		"metadata": map[string]any{"namespace": ns, "name": target},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"name": target},
			"triggers":       []any{cronTrigger(start)},
		},
	}}
}

func cronTrigger(start string) any {
	return map[string]any{"type": "cron", "metadata": map[string]any{
		"timezone": "Europe/Berlin", "start": start, "end": "0 22 * * *", "desiredReplicas": "4"}}
}
