package v1

import "testing"

func TestReplicaCountReadsUnsetAsOne(t *testing.T) {
	three := int32(3)
	zero := int32(0)
	for name, tc := range map[string]struct {
		spec *ReplicaSpec
		want int32
	}{
		"missing spec":  {nil, 0},
		"unset count":   {&ReplicaSpec{}, 1},
		"explicit zero": {&ReplicaSpec{Replicas: &zero}, 0},
		"explicit":      {&ReplicaSpec{Replicas: &three}, 3},
	} {
		if got := tc.spec.ReplicaCount(); got != tc.want {
			t.Errorf("%s: ReplicaCount() = %d, want %d", name, got, tc.want)
		}
	}
}

func TestTotalReplicasSumsEveryType(t *testing.T) {
	three := int32(3)
	job := &TFJob{Spec: TFJobSpec{TFReplicaSpecs: map[ReplicaType]*ReplicaSpec{
		ReplicaTypeChief:  {},
		ReplicaTypeWorker: {Replicas: &three},
		ReplicaTypePS:     nil,
	}}}
	if got := job.TotalReplicas(); got != 4 {
		t.Errorf("TotalReplicas() = %d, want 4 (chief 1 unset, worker 3, ps missing)", got)
	}
}
