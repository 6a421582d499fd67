package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// testRetiredLabel stands for the controller's retired label.
const testRetiredLabel = "backfill.dev/retired"

// retiredJob is the metadata of a job retired in phase.
func retiredJob(ns, name, phase string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, UID: types.UID(ns + "/" + name),
		Labels: map[string]string{testRetiredLabel: phase},
	}}
}

func TestRetiredJobs(t *testing.T) {
	type step func(r *retiredJobs) error
	add := func(ns, name, phase string) step {
		return func(r *retiredJobs) error { return r.Add(retiredJob(ns, name, phase)) }
	}
	update := func(ns, name, phase string) step {
		return func(r *retiredJobs) error { return r.Update(retiredJob(ns, name, phase)) }
	}
	del := func(ns, name, phase string) step {
		return func(r *retiredJobs) error { return r.Delete(retiredJob(ns, name, phase)) }
	}
	// unlabel: the job leaves the selection, yet the apiserver still has it.
	unlabel := func(ns, name, phase string) step {
		return func(r *retiredJobs) error {
			r.present = func(m metav1.Object) bool { return m.GetName() == name }
			return r.Delete(retiredJob(ns, name, phase))
		}
	}
	replace := func(objs ...any) step {
		return func(r *retiredJobs) error { return r.Replace(objs, "7") }
	}
	cases := map[string]struct {
		steps       []step
		want        map[string]map[string]int
		wantDeleted []string
	}{
		"a list, then additions": {
			steps: []step{replace(retiredJob("a", "x", "Succeeded")), add("a", "y", "Failed"), add("b", "z", "Succeeded")},
			want:  map[string]map[string]int{"a": {"Succeeded": 1, "Failed": 1}, "b": {"Succeeded": 1}},
		},
		"an update of a job counted already counts it once": {
			steps: []step{replace(), add("a", "x", "Succeeded"), update("a", "x", "Succeeded")},
			want:  map[string]map[string]int{"a": {"Succeeded": 1}},
		},
		"a label changed by hand moves the job": {
			steps: []step{replace(), add("a", "x", "Succeeded"), update("a", "x", "Failed")},
			want:  map[string]map[string]int{"a": {"Failed": 1}},
		},
		"a value no phase has counts as Unknown": {
			steps: []step{replace(), add("a", "x", "true")},
			want:  map[string]map[string]int{"a": {"Unknown": 1}},
		},
		"a deleted job leaves the count and counts as deleted": {
			steps:       []step{replace(retiredJob("a", "x", "Succeeded"), retiredJob("a", "y", "Succeeded")), del("a", "x", "Succeeded")},
			want:        map[string]map[string]int{"a": {"Succeeded": 1}},
			wantDeleted: []string{"a"},
		},
		"a job whose label was removed leaves the count, not deleted": {
			steps: []step{replace(retiredJob("a", "x", "Failed")), unlabel("a", "x", "Failed")},
			want:  map[string]map[string]int{},
		},
		"a fresh list replaces the counts": {
			steps: []step{replace(retiredJob("a", "x", "Failed")), add("a", "y", "Failed"), replace(retiredJob("b", "z", "Succeeded"))},
			want:  map[string]map[string]int{"b": {"Succeeded": 1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var deleted []string
			r := newRetiredJobs(testRetiredLabel, func(ns string) { deleted = append(deleted, ns) })
			if _, synced := r.counts(); synced {
				t.Fatal("Synced before any list")
			}
			for _, s := range tc.steps {
				if err := s(r); err != nil {
					t.Fatal(err)
				}
			}
			got, synced := r.counts()
			if !synced {
				t.Error("Not synced after a list")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDeleted, deleted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Deleted (-want +got):\n%s", diff)
			}
		})
	}
}
