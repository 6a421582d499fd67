package gpuloan

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/queueing"
	"github.com/backfill-dev/backfill/internal/tide"
)

// jobLoan is a TFJob's GPUs in one pool.
type jobLoan struct {
	key  string // namespace/name
	job  *kubeflowv1.TFJob
	pool string
	gpus int
	// started is when its first pod in the pool started.
	started time.Time
	state   LoanState
}

// loan is the job's loan as the decisions see it.
func (l *jobLoan) loan() tide.Loan {
	out := tide.Loan{Job: l.key, GPUs: l.gpus, Started: l.started, CheckpointTime: l.state.checkpointTime()}
	if l.job != nil {
		if p := l.job.Status.Progress; p != nil && p.CheckpointTime != nil {
			out.LastCheckpoint = p.CheckpointTime.Time
		}
	}
	if l.state.Phase == PhaseReturning {
		out.Deadline = l.state.Deadline
	}
	return out
}

// cluster is what one decision reads of the cluster.
type cluster struct {
	pools map[string]*pool
	// nodePool is the pool of each GPU node.
	nodePool map[string]string
	// online is the GPUs online pods hold, by pool.
	online map[string]int
	// loans are the TFJobs' GPUs, by pool, by job.
	loans map[string]map[string]*jobLoan
	// taken is the GPUs of jobs left to Kueue, by pool: held, but no loan
	// of the manager's.
	taken map[string]int
	// jobPods are the bound pods of every TFJob, by namespace/name.
	jobPods map[string][]*clusterview.Pod
	// jobs are the TFJobs by namespace/name.
	jobs map[string]*kubeflowv1.TFJob
}

// clusterOf reads the pools, online GPUs and loans from the view's nodes
// and pods and the TFJobs.
func clusterOf(nodes []*clusterview.Node, pods []*clusterview.Pod, jobs []kubeflowv1.TFJob) *cluster {
	c := &cluster{pools: poolsOf(nodes), nodePool: map[string]string{}, online: map[string]int{},
		loans: map[string]map[string]*jobLoan{}, taken: map[string]int{}, jobPods: map[string][]*clusterview.Pod{}, jobs: map[string]*kubeflowv1.TFJob{}}
	for name, p := range c.pools {
		for n := range p.nodes {
			c.nodePool[n] = name
		}
	}
	for i := range jobs {
		c.jobs[jobs[i].Namespace+"/"+jobs[i].Name] = &jobs[i]
	}
	for _, p := range pods {
		if p.Tier == colocation.TierOffline && p.TFJob != "" {
			key := p.Namespace + "/" + p.TFJob
			c.jobPods[key] = append(c.jobPods[key], p)
		}
		pool := c.nodePool[p.Node]
		if pool == "" || p.Requests.GPU <= 0 || p.DeletionTimestamp != nil || p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed {
			continue
		}
		switch {
		case p.Tier == colocation.TierOnline:
			c.online[pool] += int(p.Requests.GPU)
		case p.TFJob != "":
			c.addLoan(pool, p)
		}
	}
	return c
}

// addLoan counts a training pod's GPUs in its job's loan, or as taken when
// Kueue manages the job.
func (c *cluster) addLoan(pool string, p *clusterview.Pod) {
	key := p.Namespace + "/" + p.TFJob
	job := c.jobs[key]
	if job != nil && leftToKueue(job) {
		c.taken[pool] += int(p.Requests.GPU)
		return
	}
	byJob := c.loans[pool]
	if byJob == nil {
		byJob = map[string]*jobLoan{}
		c.loans[pool] = byJob
	}
	l := byJob[key]
	if l == nil {
		l = &jobLoan{key: key, job: job, pool: pool}
		if job != nil {
			l.state, _, _ = ReadLoanState(job.Annotations)
		}
		byJob[key] = l
	}
	l.gpus += int(p.Requests.GPU)
	if !p.Started.IsZero() && (l.started.IsZero() || p.Started.Before(l.started)) {
		l.started = p.Started
	}
}

// leftToKueue reports whether Kueue manages the job: Kueue owns its
// runPolicy.suspend, so the manager neither pauses nor resumes it, and
// its GPUs count as taken rather than lent.
func leftToKueue(job *kubeflowv1.TFJob) bool {
	_, ok := job.Labels[queueing.QueueNameLabel]
	return ok
}

// poolLoans are a pool's loans, sorted by job.
func (c *cluster) poolLoans(pool string) []*jobLoan {
	out := make([]*jobLoan, 0, len(c.loans[pool]))
	for _, l := range c.loans[pool] {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// boundJobs are the jobs with a loan in some pool, by namespace/name.
func (c *cluster) boundJobs() map[string]bool {
	out := map[string]bool{}
	for _, byJob := range c.loans {
		for key := range byJob {
			out[key] = true
		}
	}
	return out
}

// lent is the GPUs a pool's loans hold.
func (c *cluster) lent(pool string) int {
	total := 0
	for _, l := range c.loans[pool] {
		total += l.gpus
	}
	return total
}

// finished reports whether a job succeeded or failed.
func finished(job *kubeflowv1.TFJob) bool {
	for _, cond := range job.Status.Conditions {
		if (cond.Type == kubeflowv1.JobSucceeded || cond.Type == kubeflowv1.JobFailed) && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// suspended reports whether runPolicy.suspend is set.
func suspended(job *kubeflowv1.TFJob) bool {
	s := job.Spec.RunPolicy.Suspend
	return s != nil && *s
}
