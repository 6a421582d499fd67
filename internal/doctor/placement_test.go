package doctor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestAllowedNodes(t *testing.T) {
	labelled := func(n corev1.Node, kv ...string) corev1.Node {
		n.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
		return n
	}
	tainted := func(n corev1.Node, effect corev1.TaintEffect) corev1.Node {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "online", Effect: effect}}
		return n
	}
	nodes := []corev1.Node{
		labelled(node("cpu-0"), "pool", "cpu"),
		labelled(node("gpu-0"), "pool", "gpu"),
		tainted(labelled(node("web-0"), "pool", "cpu"), corev1.TaintEffectNoSchedule),
		tainted(labelled(node("soft-0"), "pool", "cpu"), corev1.TaintEffectPreferNoSchedule),
	}
	cases := map[string]struct {
		spec corev1.PodSpec
		want []string
	}{
		"no constraints: every untainted node": {
			want: []string{"cpu-0", "gpu-0", "soft-0"},
		},
		"a node selector": {
			spec: corev1.PodSpec{NodeSelector: map[string]string{"pool": "cpu"}},
			want: []string{"cpu-0", "soft-0"},
		},
		"required node affinity": {
			spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"gpu"}}},
				}}},
			}}},
			want: []string{"cpu-0", "soft-0"},
		},
		"a toleration of the taint": {
			spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "online", Effect: corev1.TaintEffectNoSchedule}}},
			want: []string{"cpu-0", "gpu-0", "web-0", "soft-0"},
		},
		"a toleration of another value": {
			spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Value: "batch"}}},
			want: []string{"cpu-0", "gpu-0", "soft-0"},
		},
		"tolerate everything": {
			spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
			want: []string{"cpu-0", "gpu-0", "web-0", "soft-0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, n := range allowedNodes(freeOnNodes(nodes, nil), &corev1.Pod{Spec: tc.spec}) {
				got = append(got, n.node.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("allowed nodes (-want +got):\n%s", diff)
			}
		})
	}
}
