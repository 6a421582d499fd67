//go:build integration

package doctor

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/deploy/crds"
	"github.com/backfill-dev/backfill/test/framework"
)

// Kubeflow's training-operator as its manifests install it: Deployment
// training-operator in kubeflow, pods labelled
// control-plane=kubeflow-training-operator, and, with --leader-elect, the
// Lease of its default --leader-election-id.
// lacksRules reads how many of how many schema rules a CRD lacks.
var lacksRules = regexp.MustCompile(`it lacks (\d+) of backfill's (\d+) schema rules`)

const (
	kubeflowNamespace      = "kubeflow"
	trainingOperator       = "training-operator"
	trainingOperatorLabel  = "control-plane"
	trainingOperatorValue  = "kubeflow-training-operator"
	trainingOperatorImage  = "kubeflow/training-operator:v1-5170a36"
	trainingOperatorLease  = "1ca428e5.training-operator.kubeflow.org"
	trainingOperatorHolder = "training-operator-64c768746c-8xkq2_5e0c"
)

// Kubeflow's training-operator running beside backfill, as the deployment
// controller and the kubelet would show it (neither runs here, so the test
// writes the Deployment's and the pod's status): a FAIL naming the
// Deployment, its pod and its leader Lease, with the command that removes
// it. Scaled to 0 with its pod gone and its Lease expired, as
// docs/migration.md hands jobs over, it is an OK that says so; a
// training-operator left running PyTorchJobs only is no fight either.
func TestDoctorFindsAnotherTFJobController(t *testing.T) {
	ns := newNamespace(t, kubeflowNamespace)
	r := doctorAny(t, "-n", ns)
	r.mustFindOf(t, "other-tfjob-controller", "OK", "", "no other TFJob controller")

	selector := map[string]string{trainingOperatorLabel: trainingOperatorValue}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: trainingOperator, Labels: selector},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: trainingOperator, Image: trainingOperatorImage, Command: []string{"/manager"}}}},
			},
		},
	}
	create(t, deploy)
	t.Cleanup(func() { deleteObject(t, deploy) })
	deploy.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1, ObservedGeneration: deploy.Generation}
	updateStatus(t, deploy)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "training-operator-64c768746c-8xkq2", Labels: selector},
		Spec:       corev1.PodSpec{NodeName: cpuNode, Containers: deploy.Spec.Template.Spec.Containers},
	}
	create(t, pod)
	t.Cleanup(func() { deleteObject(t, pod) })
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	updateStatus(t, pod)

	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: trainingOperatorLease},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(trainingOperatorHolder), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: ptr.To(metav1.NowMicro()), RenewTime: ptr.To(metav1.NowMicro()),
		},
	}
	create(t, lease)
	t.Cleanup(func() { deleteObject(t, lease) })

	r = doctorAny(t, "-n", ns)
	if !r.Failed {
		t.Error("doctor does not FAIL with another TFJob controller running")
	}
	fight := r.mustFindOf(t, "other-tfjob-controller", "FAIL", "deployment kubeflow/training-operator",
		"Kubeflow training-operator runs beside backfill: Deployment kubeflow/training-operator wants 1 replica(s), 1 ready (running pod(s) training-operator-64c768746c-8xkq2)",
		"the two controllers fight over every TFJob's pods and status",
		"its leader "+trainingOperatorHolder+" renewed Lease kubeflow/"+trainingOperatorLease)
	wantFix(t, fight, "kubectl -n kubeflow delete deployment training-operator", "kubectl -n kubeflow scale deployment training-operator --replicas=0",
		"--enable-scheme=pytorchjob", "docs/migration.md")

	// Handed over as docs/migration.md says: scaled to 0 (its pod goes),
	// its leader gone.
	deploy.Spec.Replicas = ptr.To[int32](0)
	update(t, deploy)
	deleteObject(t, pod)
	lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now().Add(-time.Hour)))
	update(t, lease)
	r = doctorAny(t, "-n", ns)
	r.mustFindOf(t, "other-tfjob-controller", "OK", "", "no other TFJob controller", "(Deployment kubeflow/training-operator of Kubeflow training-operator is scaled to 0)")

	// Kept for PyTorchJobs, without its TFJob controller.
	deploy.Spec.Replicas = ptr.To[int32](1)
	deploy.Spec.Template.Spec.Containers[0].Args = []string{"--enable-scheme=pytorchjob", "--enable-scheme=mpijob"}
	update(t, deploy)
	r = doctorAny(t, "-n", ns)
	r.mustFindOf(t, "other-tfjob-controller", "OK", "", "runs with --enable-scheme=pytorchjob,mpijob: no TFJob controller")
}

// The TFJob CRD of an old Kubeflow install, crafted from backfill's: no
// backfill status fields, no schema rules, kustomize's and Helm's marks of
// another owner, and v1beta2 still in status.storedVersions. Doctor names
// each, and its fixes, followed with kubectl as a user would, make the CRD
// backfill's again without deleting the TFJob that lives through it all.
func TestDoctorFindsAForeignTFJobCRD(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "crd")
	create(t, makeJob(ns, "mnist", 1, quantities("cpu", "1")))
	r := doctorAny(t, "-n", ns)
	r.mustFindOf(t, "tfjob-crd-match", "OK", "", "the TFJob CRD is backfill's")

	cfg := rest.CopyConfig(apiServer.Env.Config)
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crdClient := cs.ApiextensionsV1().CustomResourceDefinitions()
	t.Cleanup(func() { restoreCRD(t, crdClient) })
	craftKubeflowCRD(t, crdClient)

	r = doctorAny(t, "-n", ns)
	schema := r.mustFindOf(t, "tfjob-crd-match", "FAIL", "crd tfjobs.kubeflow.org",
		"the installed TFJob CRD is not backfill's: its v1 schema lacks fields backfill's controller writes or reads (status.countedPods, status.disruptions, status.goodput and 2 more), so the apiserver drops them",
		"schema rules (x-kubernetes-validations)")
	if m := lacksRules.FindStringSubmatch(schema.Finding); m == nil || m[1] != m[2] {
		t.Errorf("finding %q: want it to say every one of backfill's schema rules is missing", schema.Finding)
	}
	wantFix(t, schema, "first move the stored TFJobs to v1", "kubectl apply --server-side --force-conflicts -f deploy/crds/kubeflow.org_tfjobs.yaml",
		"Never kubectl delete crd tfjobs.kubeflow.org")
	var stored, owner result
	for _, res := range r.find("tfjob-crd-match", "WARN", "crd tfjobs.kubeflow.org") {
		switch {
		case strings.Contains(res.Finding, "storedVersions"):
			stored = res
		case strings.Contains(res.Finding, "another install"):
			owner = res
		}
	}
	if !strings.Contains(stored.Finding, "TFJobs written by an older Kubeflow may still be stored as v1beta2 (the CRD's status.storedVersions is [v1beta2 v1])") {
		t.Errorf("no WARN on the stored versions: %+v", r.Results)
	}
	wantFix(t, stored, "kubectl get tfjobs -A -o json | kubectl replace -f -", `kubectl patch crd tfjobs.kubeflow.org --subresource=status --type=merge -p '{"status":{"storedVersions":["v1"]}}'`)
	for _, want := range []string{"it carries another installer's labels (app=tf-job-operator, app.kubernetes.io/name=tf-job-operator, app.kubernetes.io/component=tfjob)",
		"Helm release kubeflow/training-operator holds it"} {
		if !strings.Contains(owner.Finding, want) {
			t.Errorf("owner finding %q: want %q in it", owner.Finding, want)
		}
	}
	wantFix(t, owner, "kubectl label crd tfjobs.kubeflow.org app- app.kubernetes.io/name- app.kubernetes.io/component-",
		"kubectl annotate crd tfjobs.kubeflow.org helm.sh/resource-policy=keep")

	// As the finding says, backfill's CRD cannot replace it yet.
	ourCRDFile := filepath.Join(framework.RepoRoot(), "deploy", "crds", "kubeflow.org_tfjobs.yaml")
	if out, err := runKubectl("", "apply", "--server-side", "--force-conflicts", "-f", ourCRDFile); err == nil || !strings.Contains(out, "storedVersions") {
		t.Errorf("applying backfill's CRD over a stored v1beta2: err %v, output %q; want a refusal naming storedVersions", err, out)
	}

	// The fixes, as the findings give them (Helm is not involved here, so
	// its annotations are removed directly).
	kubectl(t, "", "label", "crd", "tfjobs.kubeflow.org", "app-", "app.kubernetes.io/name-", "app.kubernetes.io/component-")
	kubectl(t, "", "annotate", "crd", "tfjobs.kubeflow.org", "meta.helm.sh/release-name-", "meta.helm.sh/release-namespace-")
	// Rewriting every TFJob races the manager's status writes: repeat on
	// a conflict, as the fix says.
	waitFor(t, "every TFJob rewritten", func(context.Context) (bool, string) {
		out, err := runKubectl(kubectl(t, "", "get", "tfjobs", "-A", "-o", "json"), "replace", "-f", "-")
		return err == nil, out
	})
	kubectl(t, "", "patch", "crd", "tfjobs.kubeflow.org", "--subresource=status", "--type=merge", "-p", `{"status":{"storedVersions":["v1"]}}`)
	kubectl(t, "", "apply", "--server-side", "--force-conflicts", "-f", ourCRDFile)
	waitEstablished(t, crdClient)

	r = doctorAny(t, "-n", ns)
	r.mustFindOf(t, "tfjob-crd-match", "OK", "", "the TFJob CRD is backfill's")
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mnist"}, makeJob(ns, "mnist", 1, nil)); err != nil {
		t.Errorf("the TFJob did not live through the CRD's replacement: %v", err)
	}
}

// craftKubeflowCRD turns the installed TFJob CRD into an old Kubeflow
// install's, and waits until the apiserver serves it.
func craftKubeflowCRD(t *testing.T, crdClient crdInterface) {
	t.Helper()
	ctx := context.Background()
	crd, err := crdClient.Get(ctx, "tfjobs.kubeflow.org", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1 := &crd.Spec.Versions[0]
	status := v1.Schema.OpenAPIV3Schema.Properties["status"]
	for _, f := range []string{"restarts", "disruptions", "countedPods", "progress", "goodput"} {
		delete(status.Properties, f)
	}
	v1.Schema.OpenAPIV3Schema.Properties["status"] = status
	dropRules(v1.Schema.OpenAPIV3Schema)
	crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
		Name: "v1beta2", Served: true, Storage: false,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
	})
	crd.Labels = map[string]string{"app": "tf-job-operator", "app.kubernetes.io/name": "tf-job-operator", "app.kubernetes.io/component": "tfjob"}
	crd.Annotations["meta.helm.sh/release-name"] = "training-operator"
	crd.Annotations["meta.helm.sh/release-namespace"] = "kubeflow"
	if crd, err = crdClient.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("crafting the old CRD: %v", err)
	}
	crd.Status.StoredVersions = []string{"v1beta2", "v1"}
	if _, err := crdClient.UpdateStatus(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("listing v1beta2 among the stored versions: %v", err)
	}
	waitEstablished(t, crdClient)
}

// restoreCRD makes the TFJob CRD backfill's again, whatever a failed test
// left, for the cases after this one.
func restoreCRD(t *testing.T, crdClient crdInterface) {
	ctx := context.Background()
	ours := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(crds.TFJob, ours); err != nil {
		t.Fatal(err)
	}
	crd, err := crdClient.Get(ctx, ours.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("restoring the TFJob CRD: %v", err)
	}
	crd.Status.StoredVersions = []string{"v1"}
	if crd, err = crdClient.UpdateStatus(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("restoring the TFJob CRD's stored versions: %v", err)
	}
	crd.Spec, crd.Labels = ours.Spec, ours.Labels
	delete(crd.Annotations, "meta.helm.sh/release-name")
	delete(crd.Annotations, "meta.helm.sh/release-namespace")
	if _, err := crdClient.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("restoring the TFJob CRD: %v", err)
	}
	waitEstablished(t, crdClient)
}

type crdInterface = interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Update(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts metav1.UpdateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	UpdateStatus(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts metav1.UpdateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}

// waitEstablished waits until the TFJob CRD is served.
func waitEstablished(t *testing.T, crdClient crdInterface) {
	t.Helper()
	waitFor(t, "the TFJob CRD to be established", func(ctx context.Context) (bool, string) {
		crd, err := crdClient.Get(ctx, "tfjobs.kubeflow.org", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, "not established"
	})
}

func dropRules(s *apiextensionsv1.JSONSchemaProps) {
	s.XValidations = nil
	for name, child := range s.Properties {
		dropRules(&child)
		s.Properties[name] = child
	}
	if s.Items != nil && s.Items.Schema != nil {
		dropRules(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		dropRules(s.AdditionalProperties.Schema)
	}
}

func update(t *testing.T, obj client.Object) {
	t.Helper()
	if err := apiServer.Client.Update(context.Background(), obj); err != nil {
		t.Fatalf("updating %T %s: %v", obj, obj.GetName(), err)
	}
}

func updateStatus(t *testing.T, obj client.Object) {
	t.Helper()
	if err := apiServer.Client.Status().Update(context.Background(), obj); err != nil {
		t.Fatalf("writing the status of %T %s: %v", obj, obj.GetName(), err)
	}
}

// deleteObject deletes obj at once (no kubelet waits on a pod's grace).
func deleteObject(t *testing.T, obj client.Object) {
	t.Helper()
	err := apiServer.Client.Delete(context.Background(), obj, client.GracePeriodSeconds(0))
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
	}
}
