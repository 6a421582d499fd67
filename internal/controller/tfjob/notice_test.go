package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// A running pod the operator stops is told first, and deleted once the
// notice has run out; a pending pod is deleted at once.
func TestStopNotice(t *testing.T) {
	pol := defaultPolicy
	pol.stopNotice = 15 * time.Second
	job := makeJob("j").replicas(Worker, 2, Never).suspend(true).started(ago(time.Minute)).obj()
	noticed := runningPod(Worker, 0)
	noticed.Annotations = map[string]string{StopReasonAnnotation: reasonSuspended, StopAtAnnotation: testNow.Add(5 * time.Second).UTC().Format(time.RFC3339)}
	due := runningPod(Worker, 0)
	due.Annotations = map[string]string{StopReasonAnnotation: reasonSuspended, StopAtAnnotation: ago(time.Second).UTC().Format(time.RFC3339)}

	cases := map[string]struct {
		pods        []*corev1.Pod
		wantNotices []string
		wantDeletes []string
		wantRequeue time.Duration
	}{
		"a running pod gets the notice":         {pods: podList(runningPod(Worker, 0), pendingPod(Worker, 1)), wantNotices: []string{"j-worker-0 TFJobSuspended " + testNow.Add(15*time.Second).UTC().Format(time.RFC3339)}, wantDeletes: []string{"j-worker-1"}, wantRequeue: 15 * time.Second},
		"a noticed pod waits for its time":      {pods: podList(noticed), wantRequeue: 5 * time.Second},
		"a pod whose notice ran out is stopped": {pods: podList(due), wantDeletes: []string{"j-worker-0"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := planPass(job, observe(job, tc.pods...), testNow, pol)
			var notices []string
			for _, n := range p.notices {
				notices = append(notices, n.pod.Name+" "+n.reason+" "+n.at.UTC().Format(time.RFC3339))
			}
			if diff := cmp.Diff(tc.wantNotices, notices, cmpOpts...); diff != "" {
				t.Errorf("notices (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDeletes, podNames(p.deletePods), cmpOpts...); diff != "" {
				t.Errorf("deleted pods (-want +got):\n%s", diff)
			}
			if p.requeueAfter != tc.wantRequeue {
				t.Errorf("requeueAfter = %v, want %v", p.requeueAfter, tc.wantRequeue)
			}
		})
	}
	t.Run("finishing stops running pods with the job's reason", func(t *testing.T) {
		done := makeJob("j").replicas(PS, 1, Never).replicas(Worker, 1, Never).started(ago(time.Minute)).obj()
		p := planPass(done, observe(done, runningPod(PS, 0), succeededPod(Worker, 0)), testNow, pol)
		if len(p.notices) != 1 || p.notices[0].reason != "TFJobSucceeded" || p.notices[0].pod.Name != "j-ps-0" {
			t.Errorf("notices = %+v, want one for j-ps-0 with reason TFJobSucceeded", p.notices)
		}
	})
}
