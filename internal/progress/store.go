package progress

import (
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// StepInterval is how often, at most, reports that bring a job no new
// checkpoint write its status: a step alone waits until the status was
// last written this long ago, and then the latest is written; a
// checkpoint is written at once, as stop notices and the choice of
// eviction victims wait for it. Writing every report would write the
// status up to 2 times a second per pod, each write a watch event to
// every watcher of TFJobs and a pass of the controller. The step is read by
// people (backfill get, describe) and by Prometheus, which scrapes every
// 15 s or more, so a step 5 s late goes unseen; and 5 s is below the 10 to
// 60 s between reports that docs/colocation.md asks for, so only jobs that
// report more often than that are held back.
const StepInterval = 5 * time.Second

// Store keeps the latest progress of each job, from its pods' reports,
// until the TFJob controller writes it into the job's status: the
// controller stays the status's only writer, and a report changes nothing
// but its own job's progress.
//
// An entry lives from its job's first accepted report until a pass of the
// controller finds the job gone from its cache (ForgetUnless): a new entry
// wakes the controller, so none is left unseen.
type Store struct {
	mu   sync.Mutex
	jobs map[types.UID]*jobProgress
	// names are the UID of the job of each name that has an entry: one
	// at most, the job the manager's cache last showed under that name.
	names map[types.NamespacedName]types.UID
	// updates wake the controller for a job with news.
	updates chan event.GenericEvent
}

type jobProgress struct {
	name     types.NamespacedName
	progress kubeflowv1.Progress
	// steps is the last step of each pod: a pod's steps never go back,
	// a restarted pod (a new UID) resumes from its checkpoint.
	steps map[types.UID]int64
	// woken: the controller was woken for the job and has not taken its
	// progress since (Take); its pass will take what comes meanwhile.
	woken bool
	// heldUntil is when the controller comes back for steps it held back
	// (HoldUntil); until then a step alone need not wake it.
	heldUntil time.Time
}

// updatesBuffer holds the wake-ups of reports the controller has not
// taken yet; beyond it a report waits for the job's next pass.
const updatesBuffer = 4096

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{jobs: map[types.UID]*jobProgress{}, names: map[types.NamespacedName]types.UID{}, updates: make(chan event.GenericEvent, updatesBuffer)}
}

// Updates are the jobs with news, for the controller to watch.
func (s *Store) Updates() <-chan event.GenericEvent { return s.updates }

// ErrStepBackwards refuses a pod's report of a step before one it reported.
type ErrStepBackwards struct{ Step, Last int64 }

func (e ErrStepBackwards) Error() string {
	return fmt.Sprintf(`"step" %d is before step %d this pod reported: steps go back only in a new pod resuming from a checkpoint`, e.Step, e.Last)
}

// Record keeps a report of pod podUID of job, made at at, and wakes the
// controller for it, unless a pass is sure to take it anyway: one already
// woken that has not taken the job's progress yet, or, for a report with
// no checkpoint, the one the controller holds steps back for. So a job's
// reports wake the controller about once per StepInterval, not each.
func (s *Store) Record(job types.NamespacedName, jobUID, podUID types.UID, r Report, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	jp := s.jobs[jobUID]
	if jp == nil {
		// A new UID under a known name: the earlier job of the name is gone.
		s.drop(job)
		jp = &jobProgress{name: job, steps: map[types.UID]int64{}}
		s.jobs[jobUID] = jp
		s.names[job] = jobUID
	}
	if last, ok := jp.steps[podUID]; ok && r.Step < last {
		return ErrStepBackwards{Step: r.Step, Last: last}
	}
	jp.steps[podUID] = r.Step
	mat := metav1.NewTime(at.Truncate(time.Second))
	p := &jp.progress
	p.Step, p.ReportTime = r.Step, mat
	if r.Epoch != nil {
		e := *r.Epoch
		p.Epoch = &e
	}
	if r.Checkpoint {
		step := r.Step
		p.CheckpointStep, p.CheckpointTime = &step, &mat
	}
	if jp.woken || (!r.Checkpoint && at.Before(jp.heldUntil)) {
		return nil
	}
	select {
	case s.updates <- event.GenericEvent{Object: &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name}}}:
		jp.woken = true
	default: // the controller is behind: the job's next report or pass takes it
	}
	return nil
}

// Progress is the latest progress reported for a job since the manager
// started, if any.
func (s *Store) Progress(jobUID types.UID) (kubeflowv1.Progress, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	jp := s.jobs[jobUID]
	if jp == nil {
		return kubeflowv1.Progress{}, false
	}
	return *jp.progress.DeepCopy(), true
}

// Take is Progress for a pass of the controller: the next report wakes it
// again (see Record).
func (s *Store) Take(jobUID types.UID) (kubeflowv1.Progress, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	jp := s.jobs[jobUID]
	if jp == nil {
		return kubeflowv1.Progress{}, false
	}
	jp.woken = false
	return *jp.progress.DeepCopy(), true
}

// HoldUntil tells the store that the controller holds the job's step back
// and comes back for it at t: reports of steps alone until then wake
// nothing.
func (s *Store) HoldUntil(jobUID types.UID, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if jp := s.jobs[jobUID]; jp != nil {
		jp.heldUntil = t
	}
}

// ForgetUnless drops the entry of the job named job unless it is of the
// job of UID keep. The controller calls it on every pass with the job its
// cache holds under that name ("" for none), so that the entries of jobs
// deleted, recreated or retired (which leave the cache) go.
func (s *Store) ForgetUnless(job types.NamespacedName, keep types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uid, ok := s.names[job]; ok && uid != keep {
		s.drop(job)
	}
}

// Len is the number of jobs the store holds progress of.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.jobs)
}

// drop deletes the entry of the job named job, if any; s.mu is held.
func (s *Store) drop(job types.NamespacedName) {
	if uid, ok := s.names[job]; ok {
		delete(s.jobs, uid)
		delete(s.names, job)
	}
}
