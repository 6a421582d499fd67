//go:build integration

package install

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// policyName is the admission policy of release backfill.
const policyName = "backfill-training-pods"

// The marks of a TFJob replica, which the policy reserves to the operator.
var operatorLabel = map[string]string{kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName}

// Only the manager's ServiceAccount makes TFJob replicas, on the real
// apiserver with the chart's policy applied: the policy's expressions
// type-check against the Pod schema; another ServiceAccount that may
// create pods is refused a pod with the operator's label or a TFJob's
// controller reference, with a message that says why and what to do, and
// may not add either to a pod; the manager may; removing them is allowed
// to all, and the garbage collector orphans a replica; ordinary pods are
// untouched; admissionPolicy.extraUsers lets another user in.
func TestAdmissionPolicyReservesTrainingPods(t *testing.T) {
	if err := clusterReady(); err != nil {
		t.Fatal(err)
	}
	// The garbage collector, and the controller that type-checks policies
	// into their status.
	kcm, err := apiServer.StartControllerManager(t.TempDir(), "garbage-collector-controller,validatingadmissionpolicy-status-controller")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kcm.Stop() })
	applyAdmissionPolicy(t)
	eventuallyTypeChecked(t, policyName)
	const ns = "admission-team"
	if err := apiServer.CreateNamespace(ctx(t), ns); err != nil {
		t.Fatal(err)
	}
	trainer := podWriter(t, ns, "trainer")
	operator := tokenClient(t, namespace, "backfill-manager")
	job := distributedJob(ns, "victim")
	if err := apiServer.Client.Create(ctx(t), job); err != nil {
		t.Fatal(err)
	}
	owner := *metav1.NewControllerRef(job, kubeflowv1.GroupVersion.WithKind(kubeflowv1.Kind))
	waitUntilRefused(t, trainer, newPod(ns, "probe", operatorLabel))

	const trainerName = "system:serviceaccount:" + ns + ":trainer"
	labelRefusal := trainerName + " may not create a pod labelled training.kubeflow.org/operator-name=tfjob-controller"
	ownerRefusal := trainerName + " may not create a pod controlled by a TFJob"
	howToFix := "submit a TFJob and let the operator create its pods; to let another controller make TFJob pods (e.g. the training-operator of Kubeflow while migrating), add its user to the Helm value admissionPolicy.extraUsers"

	t.Run("create", func(t *testing.T) {
		expectRefused(t, trainer.Create(ctx(t), newPod(ns, "forged-label", operatorLabel)), labelRefusal, "Leave the label out", howToFix)
		expectRefused(t, trainer.Create(ctx(t), newPod(ns, "forged-owner", nil, owner)), ownerRefusal, "Leave the ownerReference out", howToFix)
		// The apiserver reports the first rule a request breaks.
		expectRefused(t, trainer.Create(ctx(t), newPod(ns, "forged-both", operatorLabel, owner)), labelRefusal)
		for _, pod := range []*corev1.Pod{
			newPod(ns, "plain", map[string]string{"app": "notebook"}),
			newPod(ns, "other-operator", map[string]string{kubeflowv1.OperatorNameLabel: "pytorchjob-controller"}),
		} {
			if err := trainer.Create(ctx(t), pod); err != nil {
				t.Errorf("Creating pod %s without the marks: %v, want it created", pod.Name, err)
			}
		}
		if err := operator.Create(ctx(t), newPod(ns, "victim-worker-0", operatorLabel, owner)); err != nil {
			t.Errorf("The manager's ServiceAccount creating a replica: %v, want it created", err)
		}
	})

	t.Run("update", func(t *testing.T) {
		plain := getPod(t, ns, "plain")
		expectRefused(t, patchPod(t, trainer, plain, func(p *corev1.Pod) { p.Labels[kubeflowv1.OperatorNameLabel] = kubeflowv1.OperatorName }),
			trainerName+" may not label a pod training.kubeflow.org/operator-name=tfjob-controller")
		expectRefused(t, patchPod(t, trainer, getPod(t, ns, "other-operator"), func(p *corev1.Pod) { p.Labels[kubeflowv1.OperatorNameLabel] = kubeflowv1.OperatorName }),
			trainerName+" may not label a pod")
		expectRefused(t, patchPod(t, trainer, plain, func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{owner} }),
			trainerName+" may not make a pod controlled by a TFJob")

		// A replica's marks may stay while the rest changes, and go.
		replica := getPod(t, ns, "victim-worker-0")
		if err := patchPod(t, trainer, replica, func(p *corev1.Pod) { p.Annotations = map[string]string{"team.example/note": "kept"} }); err != nil {
			t.Errorf("Annotating a replica, its marks unchanged: %v, want it allowed", err)
		}
		other := owner
		other.UID, other.Name = "00000000-0000-0000-0000-000000000001", "other-job"
		expectRefused(t, patchPod(t, trainer, getPod(t, ns, "victim-worker-0"), func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{other} }),
			trainerName+" may not make a pod controlled by a TFJob")
		if err := patchPod(t, trainer, getPod(t, ns, "victim-worker-0"), func(p *corev1.Pod) { p.OwnerReferences = nil }); err != nil {
			t.Errorf("Removing a replica's ownerReference, as the garbage collector orphans it: %v, want it allowed", err)
		}
		if err := patchPod(t, trainer, getPod(t, ns, "victim-worker-0"), func(p *corev1.Pod) { delete(p.Labels, kubeflowv1.OperatorNameLabel) }); err != nil {
			t.Errorf("Removing a replica's operator label: %v, want it allowed", err)
		}
		expectRefused(t, patchPod(t, trainer, getPod(t, ns, "victim-worker-0"), func(p *corev1.Pod) { p.Labels[kubeflowv1.OperatorNameLabel] = kubeflowv1.OperatorName }),
			trainerName+" may not label a pod")
		if err := patchPod(t, operator, getPod(t, ns, "victim-worker-0"), func(p *corev1.Pod) {
			p.Labels[kubeflowv1.OperatorNameLabel] = kubeflowv1.OperatorName
			p.OwnerReferences = []metav1.OwnerReference{owner}
		}); err != nil {
			t.Errorf("The manager's ServiceAccount adopting a pod: %v, want it allowed", err)
		}
	})

	t.Run("garbage collector orphans a replica", func(t *testing.T) {
		orphan := newPod(ns, "victim-worker-1", operatorLabel, owner)
		if err := operator.Create(ctx(t), orphan); err != nil {
			t.Fatal(err)
		}
		if err := apiServer.Client.Delete(ctx(t), job, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the TFJob gone and its replica orphaned", func(ctx context.Context) (bool, string, error) {
			pod := &corev1.Pod{}
			if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(orphan), pod); err != nil {
				return false, "", err
			}
			err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), &kubeflowv1.TFJob{})
			return apierrors.IsNotFound(err) && len(pod.OwnerReferences) == 0,
				fmt.Sprintf("TFJob: %v; the pod's owners: %v", err, pod.OwnerReferences), nil
		})
	})

	t.Run("extra users", func(t *testing.T) {
		migrator := podWriter(t, ns, "migrator")
		applyAdmissionPolicy(t, "--set", "admissionPolicy.extraUsers={system:serviceaccount:"+ns+":migrator}")
		eventually(t, "the migrator allowed a replica", func(ctx context.Context) (bool, string, error) {
			err := migrator.Create(ctx, newPod(ns, "migrated", operatorLabel, owner), client.DryRunAll)
			return err == nil, fmt.Sprint(err), nil
		})
		expectRefused(t, trainer.Create(ctx(t), newPod(ns, "forged-again", operatorLabel)), labelRefusal)
		applyAdmissionPolicy(t)
		waitUntilRefused(t, migrator, newPod(ns, "migrated", operatorLabel))
	})
}

// eventuallyTypeChecked waits until kube-controller-manager has
// type-checked the policy's validation and message expressions against the
// Pod schema, and fails on any warning: the apiserver accepts a policy
// with a mistyped field and reports it in the status only. It does not
// type-check variables; the requests of the test exercise each of them.
func eventuallyTypeChecked(t *testing.T, name string) {
	t.Helper()
	eventually(t, "policy "+name+" type-checked", func(ctx context.Context) (bool, string, error) {
		vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Name: name}, vap); err != nil {
			return false, "", err
		}
		if vap.Status.ObservedGeneration != vap.Generation || vap.Status.TypeChecking == nil {
			return false, fmt.Sprintf("generation %d, observed %d", vap.Generation, vap.Status.ObservedGeneration), nil
		}
		if w := vap.Status.TypeChecking.ExpressionWarnings; len(w) > 0 {
			return false, "", fmt.Errorf("the apiserver warns of the policy's expressions: %+v", w)
		}
		return true, "", nil
	})
}

// admissionPolicy renders as a ValidatingAdmissionPolicy matching pods
// only (not their subresources) on create and update, bound to deny, and
// lets the release's own ServiceAccount and admissionPolicy.extraUsers
// through; admissionPolicy.enabled=false renders neither object.
func TestAdmissionPolicyRendering(t *testing.T) {
	tests := map[string]struct {
		release   string
		set       []string
		wantUsers string
	}{
		"default": {release: "backfill", wantUsers: `["system:serviceaccount:backfill-system:backfill-manager"]`},
		"extra users": {release: "backfill", set: []string{"admissionPolicy.extraUsers={system:serviceaccount:kubeflow:training-operator,ci-bot}"},
			wantUsers: `["system:serviceaccount:backfill-system:backfill-manager","system:serviceaccount:kubeflow:training-operator","ci-bot"]`},
		"another release":  {release: "training", wantUsers: `["system:serviceaccount:backfill-system:training-backfill-manager"]`},
		"fullnameOverride": {release: "backfill", set: []string{"fullnameOverride=tf"}, wantUsers: `["system:serviceaccount:backfill-system:tf-manager"]`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := []string{}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			objs := decode(t, helmTemplate(t, valueSet{release: tc.release, values: "default.yaml"}, args...))
			vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
			oneOf(t, ofComponent(objs, "manager"), "ValidatingAdmissionPolicy", vap)
			binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			oneOf(t, ofComponent(objs, "manager"), "ValidatingAdmissionPolicyBinding", binding)
			wantRules := []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}}}
			if vap.Spec.MatchConstraints == nil {
				t.Fatal("The policy has no matchConstraints")
			}
			if diff := cmp.Diff(wantRules, vap.Spec.MatchConstraints.ResourceRules); diff != "" {
				t.Errorf("The policy's resourceRules (-want +got):\n%s", diff)
			}
			if len(vap.Spec.MatchConditions) != 1 || vap.Spec.MatchConditions[0].Expression != "!(request.userInfo.username in "+tc.wantUsers+")" {
				t.Errorf("The policy's matchConditions are %+v, want the users %s let through", vap.Spec.MatchConditions, tc.wantUsers)
			}
			if ptr.Deref(vap.Spec.FailurePolicy, "") != admissionregistrationv1.Fail {
				t.Errorf("failurePolicy %v, want Fail", vap.Spec.FailurePolicy)
			}
			if binding.Spec.PolicyName != vap.Name || fmt.Sprint(binding.Spec.ValidationActions) != "[Deny]" || binding.Spec.MatchResources != nil {
				t.Errorf("The binding %+v, want policy %s denied in every namespace", binding.Spec, vap.Name)
			}
		})
	}
	for _, o := range decode(t, helmTemplate(t, valueSets["default"], "--set", "admissionPolicy.enabled=false")) {
		if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
			t.Errorf("admissionPolicy.enabled=false rendered %s %s", o.GetKind(), o.GetName())
		}
	}
}

// applyAdmissionPolicy applies the chart's policy and binding, with the
// manager's ServiceAccount and the values given.
func applyAdmissionPolicy(t *testing.T, set ...string) {
	t.Helper()
	apply(t, helmTemplate(t, valueSets["default"], append(set, "--show-only", "templates/admissionpolicy.yaml",
		"--show-only", "templates/serviceaccount.yaml", "--show-only", "templates/clusterrole.yaml",
		"--show-only", "templates/clusterrolebinding.yaml")...))
}

// waitUntilRefused waits until the policy, which the apiserver loads a
// moment after it is created or changed, refuses c's pod (a dry run, so
// that nothing is created before it does).
func waitUntilRefused(t *testing.T, c client.Client, pod *corev1.Pod) {
	t.Helper()
	eventually(t, "the policy refusing pod "+pod.Name, func(ctx context.Context) (bool, string, error) {
		err := c.Create(ctx, pod.DeepCopy(), client.DryRunAll)
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), policyName), fmt.Sprint(err), nil
	})
}

// expectRefused checks that the policy refused a request with a message
// that holds each of want.
func expectRefused(t *testing.T, err error, want ...string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("Got %v, want Forbidden by %s", err, policyName)
		return
	}
	for _, w := range append([]string{"ValidatingAdmissionPolicy '" + policyName + "'"}, want...) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("The refusal %q does not say %q", err, w)
		}
	}
}

// podWriter is a client of ServiceAccount sa of ns, which may create and
// change pods there (not the operator).
func podWriter(t *testing.T, ns, sa string) client.Client {
	t.Helper()
	c := apiServer.Client
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pod-writer"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "update", "patch", "delete"},
		}}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pod-writer-" + sa},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-writer"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx(t), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return tokenClient(t, ns, sa)
}

// tokenClient is a client authenticated with a token the TokenRequest API
// issues for ServiceAccount sa of ns, as a pod of it would be.
func tokenClient(t *testing.T, ns, sa string) client.Client {
	t.Helper()
	clientset, err := kubernetes.NewForConfig(apiServer.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx(t), sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("A token of ServiceAccount %s/%s: %v", ns, sa, err)
	}
	cfg := rest.AnonymousClientConfig(apiServer.Env.Config)
	cfg.BearerToken = tr.Status.Token
	c, err := client.New(cfg, client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newPod is a pod with labels and owners.
func newPod(ns, name string, labels map[string]string, owners ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, OwnerReferences: owners},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "tensorflow/tensorflow:2.13.0"}}},
	}
}

func getPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := apiServer.Client.Get(ctx(t), client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	return pod
}

// patchPod changes pod as c with a merge patch.
func patchPod(t *testing.T, c client.Client, pod *corev1.Pod, change func(*corev1.Pod)) error {
	t.Helper()
	changed := pod.DeepCopy()
	change(changed)
	return c.Patch(ctx(t), changed, client.MergeFrom(pod))
}
