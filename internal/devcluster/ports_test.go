package devcluster

import "testing"

// No port is handed out twice, however often the cluster asks.
func TestFreePortsNeverRepeat(t *testing.T) {
	c := &Cluster{}
	seen := map[int]bool{}
	for range 200 {
		ports, err := c.freePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		if len(ports) != 3 {
			t.Fatalf("got %d ports, want 3", len(ports))
		}
		for _, p := range ports {
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
}
