package nodeagent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestShare(t *testing.T) {
	cases := map[string]struct {
		ceiling int64
		claims  []claim
		want    map[types.UID]int64
	}{
		"one pod takes the ceiling": {
			ceiling: 3000, claims: []claim{{uid: "a", weight: 1000}},
			want: map[types.UID]int64{"a": 3000}},
		"by weight": {
			ceiling: 3000, claims: []claim{{uid: "a", weight: 1000}, {uid: "b", weight: 2000}},
			want: map[types.UID]int64{"a": 1000, "b": 2000}},
		"a pod's limit caps it and the rest goes to the others": {
			ceiling: 4000, claims: []claim{{uid: "a", weight: 1000, limit: 500}, {uid: "b", weight: 1000}, {uid: "c", weight: 1000}},
			want: map[types.UID]int64{"a": 500, "b": 1750, "c": 1750}},
		"limits above the fair share do not bind": {
			ceiling: 2000, claims: []claim{{uid: "a", weight: 1000, limit: 4000}, {uid: "b", weight: 1000, limit: 4000}},
			want: map[types.UID]int64{"a": 1000, "b": 1000}},
		"every pod keeps a milli-core": {
			ceiling: 1, claims: []claim{{uid: "a", weight: 1000}, {uid: "b", weight: 1000}},
			want: map[types.UID]int64{"a": 1, "b": 1}},
		"no pods": {ceiling: 1000, want: map[types.UID]int64{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, share(tc.ceiling, tc.claims)); diff != "" {
				t.Errorf("share(%d) (-want +got):\n%s", tc.ceiling, diff)
			}
		})
	}
}
