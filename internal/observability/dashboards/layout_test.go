package dashboards

import (
	"encoding/json"
	"testing"
)

// TestLayout wants every panel of every dashboard inside Grafana's 24
// columns and no two panels on the same cells, so that adding a figure or
// a panel cannot push another off the row or under it.
func TestLayout(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range all {
		t.Run(b.Name, func(t *testing.T) {
			out, err := ProvisionedJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			checkLayout(t, out)
		})
	}
}

// checkLayout checks one dashboard's JSON as TestLayout says.
func checkLayout(t *testing.T, out []byte) {
	t.Helper()
	var model struct {
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			GridPos struct{ X, Y, W, H int }
		} `json:"panels"`
	}
	if err := json.Unmarshal(out, &model); err != nil {
		t.Fatal(err)
	}
	taken := map[[2]int]int{}
	for _, p := range model.Panels {
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %d %q at %+v: outside the 24 columns", p.ID, p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[[2]int{x, y}]; ok {
					t.Errorf("panel %d %q overlaps panel %d at column %d row %d", p.ID, p.Title, other, x, y)
				}
				taken[[2]int{x, y}] = p.ID
			}
		}
	}
}
