package gpuloan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/backfill-dev/backfill/internal/tide"
)

// A ScaledObject reads as KEDA reads it: kind Deployment unless stated,
// minReplicaCount 0 unless stated, cron triggers' metadata as strings.
func TestScaledObjectOf(t *testing.T) {
	cron := func(desired string) any {
		return map[string]any{"type": "cron", "metadata": map[string]any{"timezone": "Europe/Berlin", "start": "0 7 * * *", "end": "0 22 * * *", "desiredReplicas": desired}}
	}
	cases := map[string]struct {
		spec    map[string]any
		want    scaledObject
		wantErr bool
	}{
		"a Deployment by default, minimum 0": {
			spec: map[string]any{"scaleTargetRef": map[string]any{"name": "infer"}, "triggers": []any{cron("8")}},
			want: scaledObject{name: "online/so", target: "Deployment/online/infer",
				crons: []tide.CronTrigger{{Timezone: "Europe/Berlin", Start: "0 7 * * *", End: "0 22 * * *", DesiredReplicas: 8}}},
		},
		"a StatefulSet with a minimum and another trigger": {
			spec: map[string]any{"scaleTargetRef": map[string]any{"name": "infer", "kind": "StatefulSet"}, "minReplicaCount": int64(2),
				"triggers": []any{map[string]any{"type": "prometheus", "metadata": map[string]any{"query": "up"}}, cron("4")}},
			want: scaledObject{name: "online/so", target: "StatefulSet/online/infer", minReplicas: 2, others: true,
				crons: []tide.CronTrigger{{Timezone: "Europe/Berlin", Start: "0 7 * * *", End: "0 22 * * *", DesiredReplicas: 4}}},
		},
		"desiredReplicas not a number": {
			spec:    map[string]any{"scaleTargetRef": map[string]any{"name": "infer"}, "triggers": []any{cron("eight")}},
			want:    scaledObject{name: "online/so", target: "Deployment/online/infer"},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
				"metadata": map[string]any{"namespace": "online", "name": "so"}, "spec": tc.spec}}
			got := scaledObjectOf(u)
			if (got.err != nil) != tc.wantErr {
				t.Errorf("err = %v, want an error: %v", got.err, tc.wantErr)
			}
			got.err = nil
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(scaledObject{})); diff != "" {
				t.Errorf("scaledObjectOf (-want +got):\n%s", diff)
			}
		})
	}
}
