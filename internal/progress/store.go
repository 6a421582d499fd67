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

// Store keeps the latest progress of each job, from its pods' reports,
// until the TFJob controller writes it into the job's status: the
// controller stays the status's only writer, and a report changes nothing
// but its own job's progress.
type Store struct {
	mu   sync.Mutex
	jobs map[types.UID]*jobProgress
	// updates wake the controller for a job with news.
	updates chan event.GenericEvent
}

type jobProgress struct {
	progress kubeflowv1.Progress
	// steps is the last step of each pod: a pod's steps never go back,
	// a restarted pod (a new UID) resumes from its checkpoint.
	steps map[types.UID]int64
}

// updatesBuffer holds the wake-ups of reports the controller has not
// taken yet; beyond it a report waits for the job's next pass.
const updatesBuffer = 4096

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{jobs: map[types.UID]*jobProgress{}, updates: make(chan event.GenericEvent, updatesBuffer)}
}

// Updates are the jobs with news, for the controller to watch.
func (s *Store) Updates() <-chan event.GenericEvent { return s.updates }

// ErrStepBackwards refuses a pod's report of a step before one it reported.
type ErrStepBackwards struct{ Step, Last int64 }

func (e ErrStepBackwards) Error() string {
	return fmt.Sprintf(`"step" %d is before step %d this pod reported: steps go back only in a new pod resuming from a checkpoint`, e.Step, e.Last)
}

// Record keeps a report of pod podUID of job, made at at.
func (s *Store) Record(job types.NamespacedName, jobUID, podUID types.UID, r Report, at time.Time) error {
	s.mu.Lock()
	jp := s.jobs[jobUID]
	if jp == nil {
		jp = &jobProgress{steps: map[types.UID]int64{}}
		s.jobs[jobUID] = jp
	}
	if last, ok := jp.steps[podUID]; ok && r.Step < last {
		s.mu.Unlock()
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
	s.mu.Unlock()
	select {
	case s.updates <- event.GenericEvent{Object: &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name}}}:
	default: // the controller is behind: the job's next pass takes it
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

// Forget drops a job that is gone.
func (s *Store) Forget(jobUID types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.jobs, jobUID)
}
