package nodeagent

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// claim is one offline pod's part in sharing the offline ceiling.
type claim struct {
	uid types.UID
	// weight is its share; limit the most it may get (0: no limit), both
	// in milli-cores.
	weight, limit int64
}

// share divides the offline ceiling among the offline pods in proportion
// to their weights, none above its own limit: what a limited pod cannot
// take goes to the others (water filling). Every pod gets at least one
// milli-core, the least a CFS quota can hold.
func share(ceiling int64, claims []claim) map[types.UID]int64 {
	out := make(map[types.UID]int64, len(claims))
	// Fill the pods whose limit is below their fair share first: what
	// they leave raises the fair share of the rest.
	sorted := slices.Clone(claims)
	slices.SortFunc(sorted, cmpRatio)
	left, weights := ceiling, int64(0)
	for _, c := range sorted {
		weights += max(c.weight, 1)
	}
	for _, c := range sorted {
		w := max(c.weight, 1)
		fair := left * w / weights
		if c.limit > 0 && c.limit < fair {
			fair = c.limit
		}
		fair = max(fair, 1)
		out[c.uid] = fair
		left = max(left-fair, 0)
		weights -= w
	}
	return out
}

// cmpRatio orders claims by limit per weight, pods without a limit last:
// the order in which water filling meets their limits.
func cmpRatio(a, b claim) int {
	switch {
	case a.limit == 0 && b.limit == 0:
		return 0
	case a.limit == 0:
		return 1
	case b.limit == 0:
		return -1
	}
	// a.limit/a.weight against b.limit/b.weight, without division.
	l, r := a.limit*max(b.weight, 1), b.limit*max(a.weight, 1)
	switch {
	case l < r:
		return -1
	case l > r:
		return 1
	}
	return 0
}
