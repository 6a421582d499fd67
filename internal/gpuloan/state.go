package gpuloan

import (
	"encoding/json"
	"fmt"
	"time"
)

// LoanAnnotation on a TFJob holds, as JSON, the LoanState the manager keeps
// of the job's GPU loan: what survives the manager's restarts, and what
// `kubectl get -o yaml` shows of it.
const LoanAnnotation = "backfill.dev/gpu-loan"

// Phase is where a job's loan stands.
type Phase string

const (
	// PhaseReturning is a loan told to return: the job's pods have their
	// stop notice; its GPUs go back at Deadline, or as soon as it reports
	// a checkpoint.
	PhaseReturning Phase = "Returning"
	// PhasePaused is a loan returned: the manager suspended the job, and
	// resumes it when a loan is long enough again.
	PhasePaused Phase = "Paused"
	// PhaseLent is a loan begun again: the manager resumed the job.
	PhaseLent Phase = "Lent"
)

// LoanState is the value of LoanAnnotation.
type LoanState struct {
	Phase Phase `json:"phase"`
	// Pool and GPUs are what the job borrowed: the pool it resumes in.
	Pool string `json:"pool"`
	GPUs int    `json:"gpus"`
	// NoticeAt is when the pods got their stop notice, Deadline when the
	// GPUs are back at the latest; Short says the notice was shorter than
	// the job's checkpoint time.
	NoticeAt time.Time `json:"noticeAt,omitzero"`
	Deadline time.Time `json:"deadline,omitzero"`
	Short    bool      `json:"short,omitempty"`
	// Late says online pods waited for the job's GPUs while it returned
	// them.
	Late bool `json:"late,omitempty"`
	// ReturnedAt is when the job paused; NextLoan when it may borrow again
	// (zero: not within the forecast).
	ReturnedAt time.Time `json:"returnedAt,omitzero"`
	NextLoan   time.Time `json:"nextLoan,omitzero"`
	// ResumedAt is when the manager last resumed the job.
	ResumedAt time.Time `json:"resumedAt,omitzero"`
	// CheckpointSeconds is the job's checkpoint time as its last handshake
	// measured it: from the notice to the checkpoint it reported; 0 until
	// one did.
	CheckpointSeconds int64 `json:"checkpointSeconds,omitempty"`
	// CheckpointIntervalSeconds is how often the job checkpoints on its
	// own, as the manager learnt it from the checkpoints it reported on a
	// loan; 0 until two did.
	CheckpointIntervalSeconds int64 `json:"checkpointIntervalSeconds,omitempty"`
}

// ReadLoanState parses a job's LoanAnnotation; ok is false when it has
// none.
func ReadLoanState(annotations map[string]string) (s LoanState, ok bool, err error) {
	v, ok := annotations[LoanAnnotation]
	if !ok {
		return LoanState{}, false, nil
	}
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return LoanState{}, true, fmt.Errorf("annotation %s: %w", LoanAnnotation, err)
	}
	return s, true, nil
}

// annotation is s as the value of LoanAnnotation.
func (s LoanState) annotation() string {
	data, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("marshalling a loan state: %v", err)) // plain data
	}
	return string(data)
}

// checkpointInterval is the learnt checkpoint interval, 0 when none.
func (s LoanState) checkpointInterval() time.Duration {
	return time.Duration(s.CheckpointIntervalSeconds) * time.Second
}

// checkpointTime is the measured checkpoint time, 0 when none.
func (s LoanState) checkpointTime() time.Duration {
	return time.Duration(s.CheckpointSeconds) * time.Second
}

// PausedMessage says in words why a paused job waits, for its Suspended
// condition: "returned 4 GPUs to online at 07:25 UTC, next loan from
// ~22:10 UTC".
func (s LoanState) PausedMessage() string {
	msg := fmt.Sprintf("returned %d GPUs of pool %s to online work at %s", s.GPUs, s.Pool, readable(s.ReturnedAt))
	if s.NextLoan.IsZero() {
		return msg + ", no loan in sight within the forecast; resumes when GPUs are free long enough"
	}
	return msg + ", next loan from ~" + readable(s.NextLoan)
}

// readable is a time as a reader of a job's status wants it: date and time
// of day in UTC, to the minute.
func readable(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
