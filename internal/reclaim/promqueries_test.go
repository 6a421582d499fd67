package reclaim

import (
	"slices"
	"testing"
)

// A warning is logged the first time Prometheus gives it, not every pass.
func TestPromQueriesWarnOnce(t *testing.T) {
	p := newPromQueries(nil)
	for i, tc := range []struct {
		given, want []string
	}{
		{given: []string{"partial answer", "not a counter"}, want: []string{"partial answer", "not a counter"}},
		{given: []string{"not a counter", "partial answer"}, want: nil},
		{given: []string{"partial answer", "data truncated"}, want: []string{"data truncated"}},
		{given: nil, want: nil},
	} {
		if got := p.unwarned(tc.given); !slices.Equal(got, tc.want) {
			t.Errorf("pass %d: unwarned(%q) = %q, want %q", i, tc.given, got, tc.want)
		}
	}
}
