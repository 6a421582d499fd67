package devcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/progress"
)

// The simulated training code's progress reports: what a training script
// using python/backfill_report.py does, for the local cluster's pods,
// which run no code. One replica of each job reports, as TF_CONFIG's chief
// would: its step every few seconds, a checkpoint a few times in its
// simulated run and, once given a stop notice, a checkpoint shortly after (the
// handshake). A new pod resumes from the job's last checkpoint, so the
// steps a disruption undoes are redone.
const (
	simStepsPerSecond  = 10
	simReportEvery     = 10 * time.Second
	simCheckpointDelay = 2 * time.Second // a save on notice takes this long
	simReportTimeout   = 5 * time.Second // one pod's token and report
	// simTokenSeconds is the shortest life TokenRequest grants.
	simTokenSeconds = 600
)

type progressReporter struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	runFor time.Duration // a replica's run, unless its pod says
	runs   map[types.UID]*reportingRun
}

// reportingRun is one reporting pod's training run.
type reportingRun struct {
	url             string
	client          *http.Client
	checkpointEvery time.Duration
	base            int64 // the checkpointed step the run resumed from
	started         time.Time
	token           string
	tokenUntil      time.Time
	lastReport      time.Time
	lastCheckpoint  time.Time
	noticeSeen      time.Time
	noticeAnswered  bool
	refusedLoggedAt time.Time
}

// reportProgress runs the reports of the local cluster's training pods
// until ctx ends; a replica runs for runFor unless its pod says otherwise.
func reportProgress(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, runFor time.Duration) {
	r := &progressReporter{cs: cs, dyn: dyn, runFor: runFor, runs: map[types.UID]*reportingRun{}}
	selector := kubeflowv1.OperatorNameLabel + "=" + kubeflowv1.OperatorName
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: selector}); err == nil {
			r.pass(ctx, pods.Items, time.Now())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pass reports for every running reporting pod whose report is due, and
// forgets pods that are gone. Each pod reports on its own, as its training
// code would: a slow answer to one never delays another's checkpoint.
func (r *progressReporter) pass(ctx context.Context, pods []corev1.Pod, now time.Time) {
	// A notice to any replica is the job's: its replicas save together
	// (as TensorFlow's PreemptionCheckpointHandler does), the reporting
	// one reports it.
	noticed := map[string]bool{}
	for i := range pods {
		if pods[i].Annotations[tfjob.StopAtAnnotation] != "" {
			noticed[pods[i].Namespace+"/"+pods[i].Labels[kubeflowv1.JobNameLabel]] = true
		}
	}
	type result struct {
		run   *reportingRun
		known bool // false while the pod's job could not be read
	}
	results := make([]result, len(pods))
	var wg sync.WaitGroup
	for i := range pods {
		pod := &pods[i]
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil || pod.Status.StartTime == nil {
			continue
		}
		run, known := r.runs[pod.UID]
		if known && run == nil {
			results[i] = result{known: true} // a replica that does not report
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, simReportTimeout)
			defer cancel()
			if run == nil {
				var err error
				if run, err = r.start(ctx, pod); err != nil {
					return
				}
			}
			results[i] = result{run: run, known: true}
			if run != nil {
				r.report(ctx, pod, run, noticed[pod.Namespace+"/"+pod.Labels[kubeflowv1.JobNameLabel]], now)
			}
		})
	}
	wg.Wait()
	r.runs = map[types.UID]*reportingRun{}
	for i, res := range results {
		if res.known {
			r.runs[pods[i].UID] = res.run
		}
	}
}

// start begins a run for a pod that reports, resuming from its job's last
// checkpoint; nil for a pod that does not report.
func (r *progressReporter) start(ctx context.Context, pod *corev1.Pod) (*reportingRun, error) {
	url, ca := reportEnv(pod)
	if url == "" || pod.Labels[kubeflowv1.ReplicaIndexLabel] != "0" {
		return nil, nil
	}
	u, err := r.dyn.Resource(kubeflowv1.GroupVersion.WithResource("tfjobs")).Namespace(pod.Namespace).
		Get(ctx, pod.Labels[kubeflowv1.JobNameLabel], metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var job kubeflowv1.TFJob
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &job); err != nil {
		return nil, err
	}
	if !reports(&job, pod) {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(ca)) {
		return nil, fmt.Errorf("pod %s/%s: %s holds no certificate", pod.Namespace, pod.Name, tfjob.ReportCAEnv)
	}
	run := &reportingRun{
		url:     url,
		client:  &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
		started: pod.Status.StartTime.Time,
		// A few checkpoints in a replica's simulated run.
		checkpointEvery: max(simReportEvery, r.runFor/4),
	}
	if d, err := time.ParseDuration(pod.Annotations[kwok.SimDurationAnnotation]); err == nil {
		run.checkpointEvery = max(simReportEvery, d/4)
	}
	if p := job.Status.Progress; p != nil && p.CheckpointStep != nil {
		run.base = *p.CheckpointStep
	}
	return run, nil
}

// reportEnv is the report URL and CA the manager gave the pod's
// tensorflow container; none when the manager serves no reports.
func reportEnv(pod *corev1.Pod) (url, ca string) {
	for _, c := range pod.Spec.Containers {
		if c.Name != kubeflowv1.ContainerName {
			continue
		}
		for _, e := range c.Env {
			switch e.Name {
			case tfjob.ReportURLEnv:
				url = e.Value
			case tfjob.ReportCAEnv:
				ca = e.Value
			}
		}
	}
	return url, ca
}

// reports says whether pod is the replica that reports for job: the chief
// (or master), or worker 0 of a job without one.
func reports(job *kubeflowv1.TFJob, pod *corev1.Pod) bool {
	if pod.Labels[kubeflowv1.ReplicaIndexLabel] != "0" {
		return false
	}
	chief := func(rt string) bool {
		return strings.EqualFold(rt, string(kubeflowv1.ReplicaTypeChief)) || strings.EqualFold(rt, string(kubeflowv1.ReplicaTypeMaster))
	}
	switch rt := pod.Labels[kubeflowv1.ReplicaTypeLabel]; {
	case chief(rt):
		return true
	case strings.EqualFold(rt, string(kubeflowv1.ReplicaTypeWorker)):
		for rt, spec := range job.Spec.TFReplicaSpecs {
			if chief(string(rt)) && spec.ReplicaCount() > 0 {
				return false
			}
		}
		return true
	}
	return false
}

// report sends the report that is due, if any: the checkpoint answering
// a notice to the job (noticed) first, then a periodic checkpoint, then
// the step.
func (r *progressReporter) report(ctx context.Context, pod *corev1.Pod, run *reportingRun, noticed bool, now time.Time) {
	if !noticed {
		run.noticeSeen, run.noticeAnswered = time.Time{}, false
	}
	if run.noticeAnswered {
		return // the save is reported; the replica noticed is about to stop
	}
	if noticed && run.noticeSeen.IsZero() {
		run.noticeSeen = now
	}
	step := run.base + int64(now.Sub(run.started).Seconds()*simStepsPerSecond)
	var checkpoint bool
	switch {
	case noticed:
		if now.Sub(run.noticeSeen) < simCheckpointDelay {
			return
		}
		checkpoint = true
	case now.Sub(run.started) >= run.checkpointEvery && now.Sub(run.lastCheckpoint) >= run.checkpointEvery:
		checkpoint = true
	case now.Sub(run.lastReport) < simReportEvery:
		return
	}
	if err := r.post(ctx, pod, run, progress.Report{Step: step, Checkpoint: checkpoint}, now); err != nil {
		if now.Sub(run.refusedLoggedAt) >= time.Minute {
			run.refusedLoggedAt = now
			ctrl.Log.WithName("training-sim").Info("A progress report failed; retrying", "pod", pod.Namespace+"/"+pod.Name, "error", err.Error())
		}
		return
	}
	run.lastReport = now
	if checkpoint {
		run.lastCheckpoint = now
		run.noticeAnswered = noticed
	}
}

// post sends one report with a token bound to the pod, as the kubelet
// would project it.
func (r *progressReporter) post(ctx context.Context, pod *corev1.Pod, run *reportingRun, rep progress.Report, now time.Time) error {
	if now.After(run.tokenUntil) {
		tok, err := r.cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, serviceAccountOf(pod), &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			Audiences:         []string{tfjob.ReportAudience},
			ExpirationSeconds: ptr.To(int64(simTokenSeconds)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		}}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("requesting a token: %w", err)
		}
		run.token, run.tokenUntil = tok.Status.Token, now.Add(simTokenSeconds*time.Second/2)
	}
	body, _ := json.Marshal(rep)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, run.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+run.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := run.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("the manager answered %s", resp.Status)
	}
	return nil
}

func serviceAccountOf(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return pod.Spec.ServiceAccountName
	}
	return "default"
}
