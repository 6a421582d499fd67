package intern

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// decodedMeta is metadata whose every string is its own allocation, as
// a decoder leaves it.
func decodedMeta(name string) *metav1.ObjectMeta {
	own := strings.Clone
	return &metav1.ObjectMeta{
		Name: own(name), Namespace: own("team-a"), UID: types.UID("uid-" + name),
		Labels:          map[string]string{own("training.kubeflow.org/job-name"): own("mnist")},
		Annotations:     map[string]string{own("backfill.dev/stop-at"): own(name + "-time")},
		Finalizers:      []string{own("backfill.dev/tfjob")},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: own("kubeflow.org/v1"), Kind: own("TFJob"), Name: own("mnist"), UID: "job-uid"}},
	}
}

// Meta changes no value, and two objects then share the strings they
// have in common, but not the values of annotations.
func TestMeta(t *testing.T) {
	a, b := decodedMeta("mnist-worker-0"), decodedMeta("mnist-worker-1")
	want := a.DeepCopy()
	Meta(a)
	Meta(b)
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("Meta changed the metadata (-before +after):\n%s", diff)
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	key := func(m map[string]string) string {
		for k := range m {
			return k
		}
		return ""
	}
	for what, pair := range map[string][2]string{
		"namespace":      {a.Namespace, b.Namespace},
		"label key":      {key(a.Labels), key(b.Labels)},
		"label value":    {a.Labels[key(a.Labels)], b.Labels[key(b.Labels)]},
		"annotation key": {key(a.Annotations), key(b.Annotations)},
		"finalizer":      {a.Finalizers[0], b.Finalizers[0]},
		"owner kind":     {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"owner name":     {a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
	} {
		if !same(pair[0], pair[1]) {
			t.Errorf("the %s %q is two copies after Meta, want one", what, pair[0])
		}
	}
	empty := &metav1.ObjectMeta{}
	if Meta(empty); empty.Labels != nil || empty.Annotations != nil {
		t.Errorf("Meta made maps for metadata without labels or annotations: %+v", empty)
	}
}
