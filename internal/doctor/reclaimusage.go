package doctor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// checkReclaimUsage says whether the nodes' reclaimed capacity follows
// current usage. The manager explains every node it decides in the
// annotation backfill.dev/reclaim; State Stale means its usage source had
// no current sample for the node, so the node's reclaimed capacity is
// frozen: it does not grow when online use falls, and no offline pod on it
// is evicted when online use rises. That is worth a look (WARN), not a
// failure: training keeps what it holds. Nodes without an explanation are
// not judged: with none at all, reclaim is off or no manager has run.
func checkReclaimUsage(s *Snapshot) Result {
	type frozen struct {
		node string
		e    reclaim.Explanation
	}
	var stale []frozen
	var unreadable []string
	explained := 0
	var total colocation.Resources
	for i := range s.Nodes {
		n := &s.Nodes[i]
		e, ok, err := reclaim.ReadExplanation(n.Annotations)
		if err != nil {
			unreadable = append(unreadable, n.Name)
			continue
		}
		if !ok {
			continue
		}
		explained++
		total = total.Add(colocation.BatchOf(n.Status.Allocatable))
		if e.State == reclaim.StateStale {
			stale = append(stale, frozen{n.Name, e})
		}
	}
	describe := "`backfill describe node NODE` shows each node's state and formula"
	switch {
	case len(stale) > 0:
		// The longest frozen first: the first to look at.
		slices.SortStableFunc(stale, func(a, b frozen) int { return cmp.Compare(a.e.At.UnixNano(), b.e.At.UnixNano()) })
		var names []string
		for _, f := range stale {
			names = append(names, fmt.Sprintf("%s for %s", f.node, age(s.Now, f.e.At)))
		}
		oldest := stale[0]
		return Result{Check: CheckReclaimUsage, Status: StatusWarn,
			Finding: fmt.Sprintf("%d of %d node(s) with reclaimed capacity have it frozen on stale usage (%s; the first since %s): %s says %q; a frozen node's reclaimed capacity does not grow, and nothing on it is evicted when online use rises",
				len(stale), explained, listNames(names), oldest.e.At.UTC().Format(time.RFC3339), oldest.node, oldest.e.Why),
			Fix: "check the manager's usage source (--reclaim-usage-source): metrics-api needs metrics-server, and `kubectl top nodes` must list these nodes; " +
				"prometheus needs the Prometheus of the manager's --prometheus-url to scrape the kubelet and the manager (see docs/install.md); " +
				"then the manager's log (`Reading usage`), `kubectl get events -A --field-selector reason=ReclaimFrozen` and `backfill describe node " + oldest.node + "`"}
	case len(unreadable) > 0:
		return Result{Check: CheckReclaimUsage, Status: StatusWarn,
			Finding: fmt.Sprintf("the annotation %s of %d node(s) is not an explanation doctor can read (%s)", reclaim.ExplanationAnnotation, len(unreadable), listNames(unreadable)),
			Fix:     "run doctor of the manager's version; " + describe}
	case explained == 0:
		return Result{Check: CheckReclaimUsage, Status: StatusSkip,
			Finding: fmt.Sprintf("no node has a reclaimed-capacity explanation (annotation %s): reclaim is off (the manager runs with --reclaim=false) or no manager with --reclaim has run yet", reclaim.ExplanationAnnotation),
			Fix:     "nothing to do while TFJobs run on requested capacity; to run them in reclaimed capacity, start the manager with --reclaim (its default) and a usage source"}
	}
	finding := fmt.Sprintf("every one of %d node(s) with reclaimed capacity follows current usage (Fresh): %s in all", explained, publishedTotal(total))
	if left := len(s.Nodes) - explained; left > 0 {
		finding += fmt.Sprintf("; %d node(s) have no explanation yet", left)
	}
	return ok(CheckReclaimUsage, finding)
}

// publishedTotal says what the nodes publish together, in CPUs and GiB to
// a tenth: totals over many nodes read badly as milli-CPU and MiB.
func publishedTotal(total colocation.Resources) string {
	if total.IsZero() {
		return "no reclaimed capacity published (online pods use what they request)"
	}
	return fmt.Sprintf("%s CPU and %sGi memory of reclaimed capacity published",
		tenths(float64(total.MilliCPU)/1000), tenths(float64(total.Memory)/(1<<30)))
}

// tenths writes v to a tenth, without a trailing ".0".
func tenths(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}
