package gpuloan

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/backfill-dev/backfill/internal/colocation"
)

func gpuTemplate(gpus int64, mutate func(*corev1.PodTemplateSpec)) *corev1.PodTemplateSpec {
	req := corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}}}}
	if mutate != nil {
		mutate(tmpl)
	}
	return tmpl
}

// Online workloads are those whose pods request GPUs and are online.
func TestWorkloadOf(t *testing.T) {
	cases := map[string]struct {
		tmpl     *corev1.PodTemplateSpec
		replicas *int32
		want     bool
		wantGPUs int
		wantN    int32
	}{
		"online, 2 GPUs, replicas unset": {tmpl: gpuTemplate(2, nil), want: true, wantGPUs: 2, wantN: 1},
		"no GPUs":                        {tmpl: gpuTemplate(0, nil)},
		"offline by its PriorityClass": {tmpl: gpuTemplate(1, func(p *corev1.PodTemplateSpec) {
			p.Spec.PriorityClassName = "backfill-offline"
		})},
		"offline by its tier label": {tmpl: gpuTemplate(1, func(p *corev1.PodTemplateSpec) {
			p.Labels = map[string]string{colocation.TierLabel: string(colocation.TierOffline)}
		})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w, ok := workloadOf(kindDeployment, "online", "infer", nil, tc.replicas, tc.tmpl, "backfill-offline")
			if ok != tc.want || (ok && (w.gpusPerPod != tc.wantGPUs || w.replicas != tc.wantN)) {
				t.Errorf("workloadOf = %+v, %v; want ok %v, %d GPUs, %d replicas", w, ok, tc.want, tc.wantGPUs, tc.wantN)
			}
		})
	}
}

// A pod may land in the pool its nodeSelector names, or in those its
// required affinity allows when every term names some; else in any.
func TestPlacementOf(t *testing.T) {
	term := func(exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: exprs}
	}
	model := func(values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: colocation.GPUModelLabel, Operator: corev1.NodeSelectorOpIn, Values: values}
	}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	affinity := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	cases := map[string]struct {
		spec     corev1.PodSpec
		fits     []string
		fitsNone []string
	}{
		"nothing: any pool":      {fits: []string{"A100", "H100"}},
		"nodeSelector":           {spec: corev1.PodSpec{NodeSelector: map[string]string{colocation.GPUModelLabel: "A100"}}, fits: []string{"A100"}, fitsNone: []string{"H100"}},
		"affinity, two models":   {spec: corev1.PodSpec{Affinity: affinity(term(model("A100")), term(zone, model("H100")))}, fits: []string{"A100", "H100"}, fitsNone: []string{"L4"}},
		"a term without a model": {spec: corev1.PodSpec{Affinity: affinity(term(model("A100")), term(zone))}, fits: []string{"A100", "L4"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pl := placementOf(&tc.spec)
			for _, m := range tc.fits {
				if !pl.fits(m) {
					t.Errorf("%s does not fit pool %s", name, m)
				}
			}
			for _, m := range tc.fitsNone {
				if pl.fits(m) {
					t.Errorf("%s fits pool %s", name, m)
				}
			}
		})
	}
}
