package nodeagent

import "testing"

func TestBudget(t *testing.T) {
	s := Settings{CPUThreshold: 85, CPUFloor: 10}
	cases := map[string]struct {
		u    usage
		want int64
	}{
		"idle node: offline gets the threshold": {
			u: usage{capacity: 8000}, want: 6800},
		"online and system use come off the threshold": {
			u: usage{capacity: 8000, node: 5000, kubepods: 4500, offline: 2000}, want: 6800 - 2500 - 500},
		"offline's own use does not shrink its budget": {
			u: usage{capacity: 8000, node: 7000, kubepods: 7000, offline: 6000}, want: 6800 - 1000},
		"a burst leaves offline the floor": {
			u: usage{capacity: 8000, node: 7900, kubepods: 7800, offline: 300}, want: 800},
		"counters that run backwards count as nothing": {
			u: usage{capacity: 8000, node: 100, kubepods: 500, offline: 900}, want: 6800},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := budget(tc.u, s); got != tc.want {
				t.Errorf("budget(%+v) = %d, want %d", tc.u, got, tc.want)
			}
		})
	}
}

func TestFollow(t *testing.T) {
	cases := map[string]struct {
		ceiling, budget, want int64
	}{
		"first tick takes the budget":               {ceiling: -1, budget: 5000, want: 5000},
		"shrinks at once":                           {ceiling: 6000, budget: 1000, want: 1000},
		"grows by at most growth per tick":          {ceiling: 1000, budget: 6000, want: 1800},
		"grows to the budget when it is near":       {ceiling: 1000, budget: 1500, want: 1500},
		"a change under 1% of the node is not made": {ceiling: 3000, budget: 3070, want: 3000},
		"nor is a drop under 1%":                    {ceiling: 3000, budget: 2930, want: 3000},
		"a drop of 1% is":                           {ceiling: 3000, budget: 2920, want: 2920},
		"stays":                                     {ceiling: 3000, budget: 3000, want: 3000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := follow(tc.ceiling, tc.budget, 8000, 10); got != tc.want {
				t.Errorf("follow(%d, %d) = %d, want %d", tc.ceiling, tc.budget, got, tc.want)
			}
		})
	}
}
