package doctor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// deployment is a Deployment of one container, its pods labelled
// key=value, with ready of replicas ready.
func deployment(namespace, name, image, key, value string, replicas, ready int32, args ...string) appsv1.Deployment {
	selector := map[string]string{key: value}
	return appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: image, Command: []string{"/manager"}, Args: args}}},
			},
		},
		Status: appsv1.DeploymentStatus{ReadyReplicas: ready},
	}
}

// controllerPod is a running pod of a controller, labelled key=value.
func controllerPod(namespace, name, image, key, value string, args ...string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{key: value}},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "manager", Image: image, Args: args}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func trainingOperatorLease(renewedAgo time.Duration) coordinationv1.Lease {
	l := lease(renewedAgo, 15)
	l.Namespace, l.Name = "kubeflow", TrainingOperatorLeaseName
	l.Spec.HolderIdentity = ptr.To("training-operator-5d7c_0b9e")
	return l
}

const trainingOperatorImage = "docker.io/kubeflow/training-operator:v1-5170a36"

func TestCheckOtherController(t *testing.T) {
	cases := map[string]struct {
		deployments []appsv1.Deployment
		pods        []corev1.Pod
		leases      []coordinationv1.Lease
		want        []verdict
		wantFinding []string
		wantFix     []string
	}{
		"nothing but backfill": {
			deployments: []appsv1.Deployment{deployment("backfill-system", "backfill-manager", "ghcr.io/backfill-dev/backfill:v0.4.0", ManagerPodLabel, ManagerPodLabelValue, 1, 1)},
			pods:        []corev1.Pod{controllerPod("backfill-system", "backfill-manager-6d8", "ghcr.io/backfill-dev/backfill:v0.4.0", ManagerPodLabel, ManagerPodLabelValue)},
			want:        []verdict{{CheckOtherController, StatusOK, ""}},
			wantFinding: []string{"no other TFJob controller"},
		},
		"the training-operator runs, and leads": {
			deployments: []appsv1.Deployment{deployment("kubeflow", "training-operator", trainingOperatorImage, "control-plane", "kubeflow-training-operator", 1, 1)},
			pods:        []corev1.Pod{controllerPod("kubeflow", "training-operator-64c768746c-8xkq2", trainingOperatorImage, "control-plane", "kubeflow-training-operator")},
			leases:      []coordinationv1.Lease{trainingOperatorLease(2 * time.Second)},
			want:        []verdict{{CheckOtherController, StatusFail, "deployment kubeflow/training-operator"}},
			wantFinding: []string{
				"Kubeflow training-operator runs beside backfill: Deployment kubeflow/training-operator wants 1 replica(s), 1 ready (running pod(s) training-operator-64c768746c-8xkq2)",
				"the two controllers fight over every TFJob's pods and status",
				"its leader training-operator-5d7c_0b9e renewed Lease kubeflow/1ca428e5.training-operator.kubeflow.org 2s ago",
			},
			wantFix: []string{"kubectl -n kubeflow delete deployment training-operator", "--enable-scheme=pytorchjob", "managedBy cannot split the jobs", "docs/migration.md"},
		},
		"a renamed Deployment, found by its image, not yet ready": {
			deployments: []appsv1.Deployment{deployment("ml", "trainer", trainingOperatorImage, "app", "trainer", 2, 0)},
			want:        []verdict{{CheckOtherController, StatusFail, "deployment ml/trainer"}},
			wantFinding: []string{"Deployment ml/trainer wants 2 replica(s), 0 ready;"},
		},
		"the training-operator scaled to 0, its Lease expired": {
			deployments: []appsv1.Deployment{deployment("kubeflow", "training-operator", trainingOperatorImage, "control-plane", "kubeflow-training-operator", 0, 0)},
			leases:      []coordinationv1.Lease{trainingOperatorLease(time.Hour)},
			want:        []verdict{{CheckOtherController, StatusOK, ""}},
			wantFinding: []string{"(Deployment kubeflow/training-operator of Kubeflow training-operator is scaled to 0)"},
		},
		"the training-operator without its TFJob controller": {
			deployments: []appsv1.Deployment{deployment("kubeflow", "training-operator", trainingOperatorImage, "control-plane", "kubeflow-training-operator", 1, 1, "--enable-scheme=pytorchjob", "--enable-scheme", "mpijob")},
			pods:        []corev1.Pod{controllerPod("kubeflow", "training-operator-64c", trainingOperatorImage, "control-plane", "kubeflow-training-operator", "--enable-scheme=pytorchjob", "--enable-scheme", "mpijob")},
			leases:      []coordinationv1.Lease{trainingOperatorLease(time.Second)},
			want:        []verdict{{CheckOtherController, StatusOK, ""}},
			wantFinding: []string{"runs with --enable-scheme=pytorchjob,mpijob: no TFJob controller"},
		},
		"the training-operator with TFJob among its schemes": {
			deployments: []appsv1.Deployment{deployment("kubeflow", "training-operator", trainingOperatorImage, "control-plane", "kubeflow-training-operator", 1, 1, "-enable-scheme=TFJob", "--enable-scheme=pytorchjob")},
			want:        []verdict{{CheckOtherController, StatusFail, "deployment kubeflow/training-operator"}},
		},
		"a tf-operator pod without a Deployment": {
			pods:        []corev1.Pod{controllerPod("kubeflow", "tf-job-operator-7b9f", "gcr.io/kubeflow-images-public/tf_operator:v0.5.0", "name", "tf-job-operator")},
			want:        []verdict{{CheckOtherController, StatusFail, "pod kubeflow/tf-job-operator-7b9f"}},
			wantFinding: []string{"Kubeflow tf-operator runs beside backfill: pod kubeflow/tf-job-operator-7b9f (phase Running, image gcr.io/kubeflow-images-public/tf_operator:v0.5.0)"},
			wantFix:     []string{"kubectl -n kubeflow get pod tf-job-operator-7b9f -o jsonpath='{.metadata.ownerReferences}'"},
		},
		"the tf-operator's Deployment: it runs TFJobs only": {
			deployments: []appsv1.Deployment{deployment("kubeflow", "tf-job-operator", "public.ecr.aws/j1r0q0g6/training/tf-operator:cd2fc1ff", "name", "tf-job-operator", 1, 1)},
			want:        []verdict{{CheckOtherController, StatusFail, "deployment kubeflow/tf-job-operator"}},
			wantFix:     []string{"kubectl -n kubeflow delete deployment tf-job-operator"},
		},
		"a fresh Lease and no pod: a leader outside the cluster": {
			leases:      []coordinationv1.Lease{trainingOperatorLease(3 * time.Second)},
			want:        []verdict{{CheckOtherController, StatusFail, "lease kubeflow/1ca428e5.training-operator.kubeflow.org"}},
			wantFinding: []string{"training-operator-5d7c_0b9e renewed its leader-election Lease kubeflow/1ca428e5.training-operator.kubeflow.org 3s ago, though none of its pods runs in this cluster"},
		},
		"a TFJob pod whose image happens to be named like a controller": {
			pods: []corev1.Pod{tfJobPodWithImage(trainingOperatorImage)},
			want: []verdict{{CheckOtherController, StatusOK, ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Deployments, s.Pods, s.ControllerLeases = tc.deployments, tc.pods, tc.leases
			got := checkOtherController(s)
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s\n%+v", diff, got)
			}
			wantTexts(t, got[0], tc.wantFinding, tc.wantFix)
		})
	}
}

func tfJobPodWithImage(image string) corev1.Pod {
	p := jobPod(makeJob("mnist").workers(1).obj(), "mnist-worker-0").on("n1").obj()
	p.Spec.Containers[0].Image = image
	return p
}

func TestImageName(t *testing.T) {
	for ref, want := range map[string]string{
		"kubeflow/training-operator:v1-5170a36":                 "training-operator",
		"localhost:5000/kubeflow/training-operator@sha256:abcd": "training-operator",
		"gcr.io/kubeflow-images-public/tf_operator":             "tf_operator",
		"training-operator":                                     "training-operator",
	} {
		if got := imageName(ref); got != want {
			t.Errorf("imageName(%q) = %q, want %q", ref, got, want)
		}
	}
}
