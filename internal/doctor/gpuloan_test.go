package doctor

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/tide"
)

// gpuDeployment is an online Deployment of replicas pods of gpus GPUs.
func gpuDeployment(name string, replicas int32, gpus string, annotations map[string]string) appsv1.Deployment {
	req := resources("nvidia.com/gpu", gpus)
	return appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name, Annotations: annotations},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "server", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}}}}},
	}
}

// scaledObject is a ScaledObject scaling Deployment web/target by cron
// triggers of the given desiredReplicas and start.
func scaledObject(name, target, start, desired string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
		"metadata": map[string]any{"namespace": "web", "name": name},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"name": target},
			"triggers": []any{map[string]any{"type": "cron", "metadata": map[string]any{
				"timezone": "Europe/Berlin", "start": start, "end": "0 22 * * *", "desiredReplicas": desired}}},
		},
	}}
	return u
}

func gpuNodeOf(name, model string) corev1.Node {
	n := node(name, "cpu", "32", "nvidia.com/gpu", "8")
	if model != "" {
		n.Labels = map[string]string{colocation.GPUModelLabel: model}
	}
	return n
}

func TestCheckGPULoanForecast(t *testing.T) {
	schedule := map[string]string{tide.ScheduleAnnotation: "Europe/Berlin 0 7 * * * - 0 22 * * * = 4"}
	offline := gpuDeployment("batch", 2, "1", nil)
	offline.Spec.Template.Spec.PriorityClassName = "backfill-offline"
	onCPU := gpuDeployment("cpu-only", 2, "0", nil)
	inH100 := gpuDeployment("h100-only", 2, "1", nil)
	inH100.Spec.Template.Spec.NodeSelector = map[string]string{colocation.GPUModelLabel: "H100"}
	history := &PrometheusView{LoanHistories: gpuloan.Histories{"Deployment/web/by-history": &tide.History{}}}

	cases := map[string]struct {
		nodes       []corev1.Node
		deployments []appsv1.Deployment
		keda        KEDAView
		prom        *PrometheusView
		// want are the results' status and object; wantIn words of
		// each finding, in order.
		want   []string
		wantIn []string
	}{
		"no GPU node": {
			nodes: []corev1.Node{node("cpu-0", "cpu", "16")}, deployments: []appsv1.Deployment{gpuDeployment("llm", 2, "1", nil)},
			want: []string{"OK "}, wantIn: []string{"no node has GPUs"},
		},
		"no online GPU workload in the pools": {
			nodes: []corev1.Node{gpuNodeOf("gpu-0", "A100")}, deployments: []appsv1.Deployment{offline, onCPU, inH100},
			want: []string{"OK "}, wantIn: []string{"no online Deployment or StatefulSet requests GPUs in pool(s) A100"},
		},
		"no forecast, no Prometheus": {
			nodes: []corev1.Node{gpuNodeOf("gpu-0", "A100")}, deployments: []appsv1.Deployment{gpuDeployment("llm", 3, "2", nil)},
			want:   []string{"WARN deployment web/llm"},
			wantIn: []string{"deployment web/llm (2 GPU(s) per pod, 3 replica(s), pool(s) A100) has no forecast", "no backfill.dev/gpu-schedule annotation", "no KEDA ScaledObject", "no --prometheus-url"},
		},
		"no forecast, Prometheus without its history": {
			nodes: []corev1.Node{gpuNodeOf("gpu-0", "")}, deployments: []appsv1.Deployment{gpuDeployment("llm", 3, "2", nil)}, prom: history,
			want: []string{"WARN deployment web/llm"}, wantIn: []string{"pool(s) unlabelled", "no replicas history in Prometheus"},
		},
		"a bad annotation, and a bad cron trigger": {
			nodes:       []corev1.Node{gpuNodeOf("gpu-0", "A100")},
			deployments: []appsv1.Deployment{gpuDeployment("llm", 3, "2", map[string]string{tide.ScheduleAnnotation: "at seven"}), gpuDeployment("target", 1, "1", nil)},
			keda:        KEDAView{Served: true, ScaledObjects: []unstructured.Unstructured{scaledObject("target-so", "target", "0 7 * *", "4")}},
			want:        []string{"WARN deployment web/llm", "WARN deployment web/target"},
			wantIn:      []string{"annotation that cannot be read", "ScaledObject web/target-so whose cron triggers cannot be read"},
		},
		"KEDA unreadable": {
			nodes: []corev1.Node{gpuNodeOf("gpu-0", "A100")}, deployments: []appsv1.Deployment{gpuDeployment("llm", 3, "2", nil)},
			keda: KEDAView{Served: true, Forbidden: true},
			want: []string{"WARN deployment web/llm"}, wantIn: []string{"KEDA's ScaledObjects could not be read (see gpu-loan-keda)"},
		},
		"every workload has one": {
			nodes: []corev1.Node{gpuNodeOf("gpu-0", "A100")},
			deployments: []appsv1.Deployment{gpuDeployment("by-annotation", 3, "2", schedule), gpuDeployment("by-keda", 1, "1", nil),
				gpuDeployment("by-history", 1, "1", nil), offline},
			keda: KEDAView{Served: true, ScaledObjects: []unstructured.Unstructured{scaledObject("so", "by-keda", "0 7 * * *", "4")}},
			prom: history,
			want: []string{"OK "}, wantIn: []string{"every online GPU workload of pool(s) A100 has a forecast: 1 from the backfill.dev/gpu-schedule annotation, 1 from KEDA cron triggers, 1 from replicas history"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Nodes, s.Deployments, s.KEDA = tc.nodes, tc.deployments, tc.keda
			got := checkGPULoanForecast(s, tc.prom)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d results, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, r := range got {
				if have := string(r.Status) + " " + r.Object; have != tc.want[i] {
					t.Errorf("result %d is %q, want %q", i, have, tc.want[i])
				}
				if r.Status == StatusWarn && !strings.Contains(r.Fix, "kubectl annotate deployment -n web "+strings.TrimPrefix(r.Object, "deployment web/")+" backfill.dev/gpu-schedule=") {
					t.Errorf("fix %q: want the annotation, for its workload", r.Fix)
				}
			}
			all := ""
			for _, r := range got {
				all += r.Finding + "\n"
			}
			for _, w := range tc.wantIn {
				if !strings.Contains(all, w) {
					t.Errorf("findings lack %q:\n%s", w, all)
				}
			}
		})
	}
}

// A user refused StatefulSets is told which role grants them.
func TestCheckGPULoanForecastNeedsStatefulSets(t *testing.T) {
	s := snapshot()
	s.Forbidden = map[string]bool{readStatefulSets: true}
	got := Run(s, nil)
	for _, r := range got {
		if r.Check == CheckGPULoanForecast {
			if r.Status != StatusSkip || !strings.Contains(r.Finding, "statefulsets in every namespace") || !strings.Contains(r.Fix, "backfill-cluster-view") {
				t.Errorf("result %+v, want a SKIP naming the read refused and the role", r)
			}
			return
		}
	}
	t.Fatal("no result of gpu-loan-forecast")
}

func TestCheckGPULoanKEDA(t *testing.T) {
	cases := map[string]struct {
		keda      KEDAView
		forbidden map[string]bool
		want      []string
		wantIn    string
	}{
		"not installed":  {want: []string{"OK "}, wantIn: "KEDA is not installed"},
		"refused":        {keda: KEDAView{Served: true, Forbidden: true}, want: []string{"WARN "}, wantIn: "you may not list scaledobjects.keda.sh in every namespace"},
		"listing failed": {keda: KEDAView{Served: true, Err: errors.New("conversion webhook for keda.sh/v1alpha1 failed")}, want: []string{"FAIL "}, wantIn: "conversion webhook"},
		"a GPU workload's trigger does not parse": {
			keda: KEDAView{Served: true, ScaledObjects: []unstructured.Unstructured{
				scaledObject("bad-start", "llm", "0 7 * *", "4"), scaledObject("bad-replicas", "llm-b", "0 7 * * *", "four"),
				scaledObject("fine", "llm-c", "0 7 * * *", "4"), scaledObject("of-cpu", "cpu-only", "0 7 * *", "4")}},
			want:   []string{"WARN scaledobject web/bad-replicas", "WARN scaledobject web/bad-start"},
			wantIn: "which scales online GPU workload deployment web/llm, cannot be read as a schedule: trigger 1:",
		},
		"all read": {
			keda: KEDAView{Served: true, ScaledObjects: []unstructured.Unstructured{scaledObject("fine", "llm-c", "0 7 * * *", "4")}},
			want: []string{"OK "}, wantIn: "1 ScaledObject(s) scale online GPU workloads, 1 with cron triggers that read as schedules",
		},
		"workloads unknown: every ScaledObject judged": {
			keda:      KEDAView{Served: true, ScaledObjects: []unstructured.Unstructured{scaledObject("of-cpu", "cpu-only", "0 7 * *", "4")}},
			forbidden: map[string]bool{readDeployments: true},
			want:      []string{"WARN scaledobject web/of-cpu"}, wantIn: "cannot be read as a schedule",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.KEDA, s.Forbidden = tc.keda, tc.forbidden
			s.Deployments = []appsv1.Deployment{gpuDeployment("llm", 2, "1", nil), gpuDeployment("llm-b", 2, "1", nil),
				gpuDeployment("llm-c", 2, "1", nil), gpuDeployment("cpu-only", 2, "0", nil)}
			got := checkGPULoanKEDA(s)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d results, want %d: %+v", len(got), len(tc.want), got)
			}
			all := ""
			for i, r := range got {
				if have := string(r.Status) + " " + r.Object; have != tc.want[i] {
					t.Errorf("result %d is %q, want %q", i, have, tc.want[i])
				}
				if r.Status != StatusOK && r.Fix == "" {
					t.Errorf("%s without a fix: %+v", r.Status, r)
				}
				all += r.Finding + "\n"
			}
			if !strings.Contains(all, tc.wantIn) {
				t.Errorf("findings lack %q:\n%s", tc.wantIn, all)
			}
		})
	}
}
