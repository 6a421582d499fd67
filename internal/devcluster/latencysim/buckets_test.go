package latencysim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBuckets: increasing, from 1ms to 10s, and within 1.1 of each other
// from 20ms to 2s, so that a 10% change of a P99 there shows.
func TestBuckets(t *testing.T) {
	b := Buckets()
	if b[0] != 0.001 || b[len(b)-1] != 10 {
		t.Errorf("buckets from %v to %v, want 0.001 to 10", b[0], b[len(b)-1])
	}
	fine := 0
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			t.Fatalf("bucket %d (%v) not above bucket %d (%v): %v", i, b[i], i-1, b[i-1], b)
		}
		if b[i-1] >= 0.02 && b[i] <= 2 {
			fine++
			if r := b[i] / b[i-1]; r > 1.1 {
				t.Errorf("buckets %v and %v are %.4f apart, want at most 1.1", b[i-1], b[i], r)
			}
		}
	}
	if fine < 40 {
		t.Errorf("%d fine buckets from 20ms to 2s, want every 9%%: %v", fine, b)
	}
}

func TestRoundSignificant(t *testing.T) {
	cases := map[float64]float64{0.0259374246: 0.02594, 1.00000001: 1, 0.2: 0.2, 1.234567: 1.235}
	for v, want := range cases {
		if got := roundSignificant(v, 4); got != want {
			t.Errorf("roundSignificant(%v, 4) = %v, want %v", v, got, want)
		}
	}
}

func TestHistogramObserve(t *testing.T) {
	bounds := []float64{0.1, 0.2, 0.5}
	cases := map[string]struct {
		values    []float64
		want      map[float64]uint64
		wantCount uint64
		wantSum   float64
	}{
		"nothing observed": {
			want: map[float64]uint64{0.1: 0, 0.2: 0, 0.5: 0},
		},
		"a value on a bound counts in that bucket (le)": {
			values: []float64{0.1, 0.2}, want: map[float64]uint64{0.1: 1, 0.2: 2, 0.5: 2}, wantCount: 2, wantSum: 0.3,
		},
		"below the first bound, between bounds, above the last": {
			values: []float64{0.01, 0.3, 7}, want: map[float64]uint64{0.1: 1, 0.2: 1, 0.5: 2}, wantCount: 3, wantSum: 7.31,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHistogram(bounds)
			for _, v := range tc.values {
				h.observe(v)
			}
			if diff := cmp.Diff(tc.want, h.cumulative()); diff != "" {
				t.Errorf("cumulative buckets (-want +got):\n%s", diff)
			}
			if h.count != tc.wantCount || h.sum < tc.wantSum-1e-9 || h.sum > tc.wantSum+1e-9 {
				t.Errorf("count %d, sum %v; want %d, %v", h.count, h.sum, tc.wantCount, tc.wantSum)
			}
		})
	}
}
