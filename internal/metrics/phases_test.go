package metrics

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestJobPhases(t *testing.T) {
	named := func(ns, name string, st kubeflowv1.JobStatus) *kubeflowv1.TFJob {
		j := job(ns, twoWorkersOnePS, st)
		j.Name = name
		return j
	}
	jobs := []client.Object{
		named("team-a", "new", status()),
		named("team-a", "waiting", status("Created=False")),
		named("team-a", "running", status("Created", "Running")),
		named("team-a", "running-too", status("Created", "Running")),
		named("team-a", "done", status("Created", "Running=False", "Succeeded")),
		named("team-b", "resumed", status("Created", "Suspended=False")),
		named("team-b", "odd", status("Created", "Exploded")),
	}
	leading := make(chan struct{})
	close(leading)
	zeros := func(ns string) map[string]float64 {
		m := map[string]float64{}
		for _, p := range Phases {
			m["backfill_tfjobs{namespace="+ns+",phase="+p+"}"] = 0
		}
		return m
	}
	want := zeros("team-a")
	want["backfill_tfjobs{namespace=team-a,phase=Pending}"] = 1
	want["backfill_tfjobs{namespace=team-a,phase=Created}"] = 1
	want["backfill_tfjobs{namespace=team-a,phase=Running}"] = 2
	want["backfill_tfjobs{namespace=team-a,phase=Succeeded}"] = 1
	for k, v := range zeros("team-b") {
		want[k] = v
	}
	want["backfill_tfjobs{namespace=team-b,phase=Suspended}"] = 1
	want["backfill_tfjobs{namespace=team-b,phase=Unknown}"] = 1

	// Retired jobs, which the cache leaves out, add to the same series.
	retired := newRetiredJobs(testRetiredLabel, nil)
	if err := retired.Replace([]any{
		retiredJob("team-a", "old", "Succeeded"),
		retiredJob("team-a", "older", "Failed"),
		retiredJob("team-c", "oldest", "Succeeded"),
	}, "1"); err != nil {
		t.Fatal(err)
	}
	withRetired := maps.Clone(want)
	withRetired["backfill_tfjobs{namespace=team-a,phase=Succeeded}"] = 2
	withRetired["backfill_tfjobs{namespace=team-a,phase=Failed}"] = 1
	maps.Copy(withRetired, zeros("team-c"))
	withRetired["backfill_tfjobs{namespace=team-c,phase=Succeeded}"] = 1

	cases := map[string]struct {
		reader  client.Reader
		retired *retiredJobs
		leading <-chan struct{}
		want    map[string]float64
	}{
		"jobs by namespace and phase, zeros included": {reader: fakeReader(t, jobs...), leading: leading, want: want},
		"retired jobs counted too":                    {reader: fakeReader(t, jobs...), retired: retired, leading: leading, want: withRetired},
		"retired jobs not listed yet: nothing":        {reader: fakeReader(t, jobs...), retired: newRetiredJobs(testRetiredLabel, nil), leading: leading},
		"no job, no series":                           {reader: fakeReader(t), leading: leading},
		"not leading: nothing":                        {reader: fakeReader(t, jobs...), leading: make(chan struct{})},
		"no source yet: nothing":                      {leading: leading},
		"the cache fails: nothing":                    {reader: failingReader{}, leading: leading},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &phaseCollector{desc: jobPhases.desc}
			c.use(tc.reader, tc.retired, tc.leading)
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			families, err := reg.Gather()
			if err != nil {
				t.Fatalf("Gathering: %v", err)
			}
			if diff := cmp.Diff(tc.want, series(families), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Series (-want +got):\n%s", diff)
			}
		})
	}
}

func fakeReader(t *testing.T, objs ...client.Object) client.Reader {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kubeflowv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

type failingReader struct{ client.Reader }

func (failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("cache not synced")
}
