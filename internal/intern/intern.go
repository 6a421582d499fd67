// Package intern keeps one copy of the strings that many cached objects
// repeat. A decoded object holds every string in its own allocation, so
// 14,000 pods of one operator hold 14,000 copies of each label key; the
// cache transforms hand their metadata through here so that they share
// one. The copies live as long as an object uses them (package unique).
package intern

import (
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// String is the one copy of s.
func String(s string) string { return unique.Make(s).Value() }

// Meta interns what objects of a namespace, job or owner share: the
// namespace, label keys and values, annotation keys (their values, such
// as times, are often unique), finalizers and owner references but their
// UIDs. Names and UIDs are each object's own and are kept as they are.
func Meta(m *metav1.ObjectMeta) {
	m.Namespace = String(m.Namespace)
	m.Labels = internMap(m.Labels, true)
	m.Annotations = internMap(m.Annotations, false)
	for i, f := range m.Finalizers {
		m.Finalizers[i] = String(f)
	}
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind, ref.Name = String(ref.APIVersion), String(ref.Kind), String(ref.Name)
	}
}

// internMap is m with its keys, and values if asked, interned.
func internMap(m map[string]string, values bool) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if values {
			v = String(v)
		}
		out[String(k)] = v
	}
	return out
}
