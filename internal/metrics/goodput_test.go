package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestGoodputBroughtToTheScrape scrapes the same jobs twice, ten minutes
// apart, with no status write between: the controller writes the account
// only when a job's phase changes, so the ten minutes must go to the cause
// each job is in, and a finished job's account must stay as it closed.
func TestGoodputBroughtToTheScrape(t *testing.T) {
	running := job("team-a", map[kubeflowv1.ReplicaType]int32{kubeflowv1.ReplicaTypeWorker: 1}, with(status("Created", "Running"), func(st *kubeflowv1.JobStatus) {
		st.Goodput = &kubeflowv1.Goodput{WaitingSeconds: 1200,
			AccountedTime: metav1.NewTime(ago(40 * time.Minute)), RunningSince: ptr.To(metav1.NewTime(ago(40 * time.Minute)))}
	}))
	running.Name = "running"
	recovering := job("team-a", map[kubeflowv1.ReplicaType]int32{kubeflowv1.ReplicaTypeWorker: 1}, with(status("Created", "Restarting"), func(st *kubeflowv1.JobStatus) {
		st.Disruptions = 1
		st.Goodput = &kubeflowv1.Goodput{ProductiveSeconds: 900, ProgressLostSeconds: 600, WaitingSeconds: 300, AccountedTime: metav1.NewTime(ago(30 * time.Minute))}
	}))
	recovering.Name = "recovering"
	done := job("team-a", map[kubeflowv1.ReplicaType]int32{kubeflowv1.ReplicaTypeWorker: 1}, with(status("Created", "Succeeded"), func(st *kubeflowv1.JobStatus) {
		st.Goodput = &kubeflowv1.Goodput{ProductiveSeconds: 3000, WaitingSeconds: 300, AccountedTime: metav1.NewTime(ago(5 * time.Minute))}
	}))
	done.Name = "done"

	leading := make(chan struct{})
	close(leading)
	scrape := func(at time.Time) map[string]float64 {
		c := newJobStateCollector()
		c.now = func() time.Time { return at }
		c.use(fakeReader(t, running, recovering, done), leading, "backfill-offline")
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for k, v := range series(families) {
			if name, _, _ := strings.Cut(k, "{"); name == NameJobGoodput {
				got[k] = v
			}
		}
		return got
	}
	goodput := func(tfjob string, productive, lost, recovery, waiting float64) map[string]float64 {
		key := func(cause string) string {
			return NameJobGoodput + "{cause=" + cause + ",namespace=team-a,tfjob=" + tfjob + "}"
		}
		return map[string]float64{
			key(GoodputProductive): productive, key(GoodputProgressLost): lost, key(GoodputRecovery): recovery, key(GoodputWaiting): waiting,
		}
	}
	merge := func(maps ...map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for _, m := range maps {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}

	// The causes of the running and the recovering job add up to their
	// hour of life; the finished job's to its 55 minutes until it ended.
	now := merge(goodput("running", 2400, 0, 0, 1200), goodput("recovering", 900, 600, 1800, 300), goodput("done", 3000, 0, 0, 300))
	if diff := cmp.Diff(now, scrape(testNow)); diff != "" {
		t.Errorf("Goodput at the first scrape (-want +got):\n%s", diff)
	}
	later := merge(goodput("running", 3000, 0, 0, 1200), goodput("recovering", 900, 600, 2400, 300), goodput("done", 3000, 0, 0, 300))
	if diff := cmp.Diff(later, scrape(testNow.Add(10*time.Minute))); diff != "" {
		t.Errorf("Goodput ten minutes later (-want +got):\n%s", diff)
	}
}
