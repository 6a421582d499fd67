package tfjob

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestReplicaOf: what the operator creates, and what Kubeflow v1 created,
// is a replica; changing any one thing a user can write makes it none.
func TestReplicaOf(t *testing.T) {
	job := makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).obj()
	made, err := podFor(job, Worker, 1, podOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		mutate  func(*corev1.Pod)
		wantErr string // "" for a replica
	}{
		"as the operator makes it": {},
		"as the cache holds it":    {mutate: func(p *corev1.Pod) { *p = *cached(p, SlimPod) }},
		"as Kubeflow v1 made it (no legacy label, no finalizer, no job-role)": {mutate: func(p *corev1.Pod) {
			delete(p.Labels, kubeflowv1.LegacyJobNameLabel)
			p.Finalizers = nil
		}},
		"owned, and not controlled, by the job too": {mutate: func(p *corev1.Pod) {
			p.OwnerReferences = append([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "uid-x"}}, p.OwnerReferences...)
		}},
		"a name that is no replica's": {mutate: func(p *corev1.Pod) { p.Name = "forged" }, wantErr: "its name is not j-worker-1"},
		"another replica's name":      {mutate: func(p *corev1.Pod) { p.Name = "j-worker-0" }, wantErr: "its name is not j-worker-1"},
		"an index beyond the replicas": {mutate: func(p *corev1.Pod) {
			p.Name, p.Labels[kubeflowv1.ReplicaIndexLabel] = "j-worker-2", "2"
		}, wantErr: "not an index below the job's 2 Worker replica(s)"},
		"a negative index": {mutate: func(p *corev1.Pod) {
			p.Name, p.Labels[kubeflowv1.ReplicaIndexLabel] = "j-worker--1", "-1"
		}, wantErr: "not an index below"},
		"an index with a leading zero": {mutate: func(p *corev1.Pod) {
			p.Name, p.Labels[kubeflowv1.ReplicaIndexLabel] = "j-worker-01", "01"
		}, wantErr: "not an index below"},
		"no index": {mutate: func(p *corev1.Pod) { delete(p.Labels, kubeflowv1.ReplicaIndexLabel) }, wantErr: "not an index below"},
		"a type the job does not run": {mutate: func(p *corev1.Pod) {
			p.Name, p.Labels[kubeflowv1.ReplicaTypeLabel] = "j-chief-0", "chief"
		}, wantErr: `replica-type is "chief", not a replica type of the job`},
		"a type in capitals": {mutate: func(p *corev1.Pod) {
			p.Name, p.Labels[kubeflowv1.ReplicaTypeLabel] = "j-Worker-1", "Worker"
		}, wantErr: "not a replica type of the job"},
		"another type's name": {mutate: func(p *corev1.Pod) { p.Name = "j-ps-1" }, wantErr: "its name is not j-worker-1"},
		"another job's name label": {mutate: func(p *corev1.Pod) {
			p.Labels[kubeflowv1.JobNameLabel] = "k"
		}, wantErr: `job-name is "k"`},
		"without the operator's label": {mutate: func(p *corev1.Pod) {
			delete(p.Labels, kubeflowv1.OperatorNameLabel)
		}, wantErr: "operator-name"},
		"another namespace": {mutate: func(p *corev1.Pod) { p.Namespace = "elsewhere" }, wantErr: "in namespace elsewhere"},
		"no controller":     {mutate: func(p *corev1.Pod) { p.OwnerReferences = nil }, wantErr: "no controller"},
		"owned, not controlled": {mutate: func(p *corev1.Pod) {
			p.OwnerReferences[0].Controller = ptr(false)
		}, wantErr: "no controller"},
		"an earlier job of the name": {mutate: func(p *corev1.Pod) {
			p.OwnerReferences[0].UID = "uid-earlier-j"
		}, wantErr: "an earlier job of the name"},
		"another job's UID under this name": {mutate: func(p *corev1.Pod) {
			p.OwnerReferences[0].Name = "k"
		}, wantErr: "not TFJob j"},
		"a controller of another kind": {mutate: func(p *corev1.Pod) {
			p.OwnerReferences[0].Kind = "PyTorchJob"
		}, wantErr: "not TFJob j"},
		"a controller of another group": {mutate: func(p *corev1.Pod) {
			p.OwnerReferences[0].APIVersion = "example.com/v1"
		}, wantErr: "not TFJob j"},
		"without blockOwnerDeletion": {mutate: func(p *corev1.Pod) {
			p.OwnerReferences[0].BlockOwnerDeletion = nil
		}, wantErr: "blockOwnerDeletion"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := made.DeepCopy()
			if tc.mutate != nil {
				tc.mutate(pod)
			}
			err := ReplicaOf(pod, job)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ReplicaOf = %v, want a replica", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("ReplicaOf = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

// The report endpoint reads jobs from the cache as they were written: a
// replica-type key in lower case is found all the same.
func TestReplicaOfUndefaultedJob(t *testing.T) {
	raw := makeJob("j").replicas("worker", 2, Never).rawObj()
	defaulted := raw.DeepCopy()
	kubeflowv1.Default(defaulted)
	pod, err := podFor(defaulted, Worker, 1, podOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ReplicaOf(pod, raw); err != nil {
		t.Errorf("ReplicaOf = %v on the job as written, want a replica", err)
	}
}

// Every service the operator makes is a replica too; the same service
// with another index is not.
func TestReplicaOfServices(t *testing.T) {
	job := makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 3, Never).obj()
	for _, id := range allReplicas(job) {
		if err := ReplicaOf(serviceFor(job, id.rtype, id.index), job); err != nil {
			t.Errorf("service of %s %d: %v", id.rtype, id.index, err)
		}
	}
	svc := serviceFor(job, Worker, 2)
	svc.Name = "j-worker-3"
	if ReplicaOf(svc, job) == nil {
		t.Error("a service of an index beyond the replicas is a replica")
	}
}

// A pod made to look like a replica is neither adopted nor counted, and
// the plan does nothing to it but give up the tracking finalizer it
// carries once it ended, and only then.
func TestPlanPassStrays(t *testing.T) {
	job := makeJob("j").replicas(Worker, 1, Never).started(ago(time.Hour)).obj()
	forged := makePod(job, Worker, 0).phase(corev1.PodRunning).obj()
	forged.Name = "forged"
	obs := observe(job)
	obs.takenPods.Insert(forged.Name)
	left := makePod(job, Worker, 1).phase(corev1.PodFailed).obj()
	running := makePod(job, Worker, 2).phase(corev1.PodRunning).obj()
	for _, pod := range []*corev1.Pod{forged, left, running} {
		if ReplicaOf(pod, job) == nil {
			t.Fatalf("pod %s is a replica", pod.Name)
		}
		if stray(pod, job) {
			obs.strays = append(obs.strays, pod)
		}
	}
	p := planPass(job, obs, testNow, policy{})
	if got := podNames(p.releasePods); len(got) != 1 || got[0] != left.Name {
		t.Errorf("released %v, want only %s, which ended", got, left.Name)
	}
	if len(p.deletePods) != 0 || len(p.notices) != 0 {
		t.Errorf("deleted %v, noticed %v: want nothing done to pods that are not replicas", podNames(p.deletePods), p.notices)
	}
	if want := []replicaID{{Worker, 0}}; !slices.Equal(p.createPods, want) {
		t.Errorf("created %v, want %v: the forged pod holds no replica's name", p.createPods, want)
	}
}
