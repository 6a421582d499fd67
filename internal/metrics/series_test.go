package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestScrapeSharesPairsInNameOrder(t *testing.T) {
	requests := newGaugeFamily("requests", "h", "node", "tier", "resource")
	allocatable := newGaugeFamily("allocatable", "h", "node", "resource")
	ch := make(chan prometheus.Metric, 3)
	s := newScrape(ch)
	s.gauge(requests, 2, "n1", "online", "cpu")
	s.gauge(requests, 3, "n1", "offline", "cpu")
	s.gauge(allocatable, 8, "n1", "cpu")
	close(ch)

	var got []*dto.Metric
	for m := range ch {
		var out dto.Metric
		if err := m.Write(&out); err != nil {
			t.Fatal(err)
		}
		got = append(got, &out)
	}
	want := [][]string{{"node", "n1", "resource", "cpu", "tier", "online"}, {"node", "n1", "resource", "cpu", "tier", "offline"}, {"node", "n1", "resource", "cpu"}}
	for i, m := range got {
		var labels []string
		for _, p := range m.GetLabel() {
			labels = append(labels, p.GetName(), p.GetValue())
		}
		if len(labels) != len(want[i]) {
			t.Fatalf("series %d has labels %v, want %v", i, labels, want[i])
		}
		for j := range labels {
			if labels[j] != want[i][j] {
				t.Fatalf("series %d has labels %v, want %v (sorted by name, as the registry expects)", i, labels, want[i])
			}
		}
	}
	if got[0].GetGauge().GetValue() != 2 || got[1].GetGauge().GetValue() != 3 || got[2].GetGauge().GetValue() != 8 {
		t.Errorf("values %v, %v, %v; want 2, 3, 8", got[0].GetGauge().GetValue(), got[1].GetGauge().GetValue(), got[2].GetGauge().GetValue())
	}
	if got[0].GetLabel()[0] != got[2].GetLabel()[0] || got[0].GetLabel()[1] != got[1].GetLabel()[1] {
		t.Error("series of one scrape do not share the pair of a label value")
	}
}

func TestScrapeRefusesAWrongLabelCount(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a series with two values for three labels was sent")
		}
	}()
	newScrape(make(chan prometheus.Metric, 1)).gauge(newGaugeFamily("requests", "h", "node", "tier", "resource"), 1, "n1", "online")
}
