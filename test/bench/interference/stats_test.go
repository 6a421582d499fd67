package main

import (
	"math"
	"testing"
)

func TestIntervalHoldsTheMedian(t *testing.T) {
	rounds := []float64{1.02, 0.98, 1.05, 1.01, 0.97, 1.30, 1.00, 1.03, math.NaN()}
	got := interval(rounds)
	if math.Abs(got.Median-1.015) > 1e-9 {
		t.Errorf("median = %v, want 1.015 (the NaN round left out)", got.Median)
	}
	if !(got.Lo <= got.Median && got.Median <= got.Hi) || got.Lo < 0.97 || got.Hi > 1.30 {
		t.Errorf("interval [%v, %v] must hold the median %v within the rounds' range", got.Lo, got.Hi, got.Median)
	}
	if got.Hi >= 1.30 {
		t.Errorf("upper bound %v: one outlier of eight must not carry the median's interval", got.Hi)
	}
	if again := interval(rounds); again.Lo != got.Lo || again.Hi != got.Hi {
		t.Errorf("the same rounds gave [%v, %v], then [%v, %v]: the resampling must be repeatable", got.Lo, got.Hi, again.Lo, again.Hi)
	}
	if len(rounds) != 9 || !math.IsNaN(rounds[8]) || rounds[5] != 1.30 {
		t.Errorf("interval changed its input: %v", rounds)
	}
	if none := interval([]float64{math.NaN()}); !math.IsNaN(none.Median) {
		t.Errorf("no finite round: median %v, want NaN", none.Median)
	}
}
