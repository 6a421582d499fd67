package devcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// stepEvery is how often a simulated worker logs a training step.
const stepEvery = 10 * time.Second

// trainingLogs writes what the simulated TensorFlow containers print: one
// file per pod, in the kubelet's log format, which kwok serves to the
// apiserver once the pod's Logs object names it.
type trainingLogs struct {
	dir     string
	dynamic dynamic.Interface
	pods    map[types.UID]*podLog
}

// podLog is the log of one pod so far.
type podLog struct {
	file     string
	steps    int
	nextStep time.Time
}

func newTrainingLogs(dir string, dyn dynamic.Interface) (*trainingLogs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the pod log directory: %w", err)
	}
	return &trainingLogs{dir: dir, dynamic: dyn, pods: map[types.UID]*podLog{}}, nil
}

// update starts the log of every pod that runs and has none, adds a
// training step to the logs of running workers when one is due, and
// forgets the pods that are gone.
func (t *trainingLogs) update(ctx context.Context, pods []corev1.Pod, now time.Time) {
	seen := make(map[types.UID]bool, len(pods))
	for i := range pods {
		pod := &pods[i]
		seen[pod.UID] = true
		log, started := t.pods[pod.UID]
		if !started {
			if pod.Status.Phase != corev1.PodRunning {
				continue
			}
			var err error
			if log, err = t.start(ctx, pod, now); err != nil {
				continue // tried again on the next round
			}
			t.pods[pod.UID] = log
		}
		if pod.Status.Phase == corev1.PodRunning && isTrainer(pod) && !now.Before(log.nextStep) {
			log.steps++
			log.nextStep = now.Add(stepEvery)
			appendLines(log.file, now, stepLine(log.steps))
		}
	}
	for uid, log := range t.pods {
		if !seen[uid] {
			// The pod's Logs object goes with it (the pod owns it).
			_ = os.Remove(log.file)
			delete(t.pods, uid)
		}
	}
}

// start writes the pod's first lines and its Logs object.
func (t *trainingLogs) start(ctx context.Context, pod *corev1.Pod, now time.Time) (*podLog, error) {
	file := filepath.Join(t.dir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID)+".log")
	if err := os.WriteFile(file, []byte(startLines(pod, now)), 0o644); err != nil {
		return nil, err
	}
	if err := t.createLogsObject(ctx, pod, file); err != nil {
		return nil, err
	}
	return &podLog{file: file, nextStep: now.Add(stepEvery)}, nil
}

// createLogsObject creates the Logs object that names the pod's file. The
// object is named after the pod, so one of an earlier pod of the same name
// may still be there, waiting for the garbage collector: it names the old
// file and goes when the collector gets to it. It is replaced by a new
// object, which the collector's delete (preconditioned on the old
// object's UID) cannot take.
func (t *trainingLogs) createLogsObject(ctx context.Context, pod *corev1.Pod, file string) error {
	objects := t.dynamic.Resource(kwok.LogsResource).Namespace(pod.Namespace)
	logs := kwok.LogsObject(pod.Namespace, pod.Name, string(pod.UID), file)
	_, err := objects.Create(ctx, logs, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing, err := objects.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the Logs object of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if ownedBy(existing.GetOwnerReferences(), pod.UID) {
		return nil
	}
	uid := existing.GetUID()
	err = objects.Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the stale Logs object of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if _, err := objects.Create(ctx, logs, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the Logs object of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, ref := range refs {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// isTrainer is false for parameter servers, which serve variables and log
// nothing after they started.
func isTrainer(pod *corev1.Pod) bool {
	return pod.Labels[kubeflowv1.ReplicaTypeLabel] != "ps"
}

// startLines are what a TensorFlow container prints when it starts: its
// task, the cluster from TF_CONFIG, then the text of the pod's
// backfill.dev/sim-log annotation.
func startLines(pod *corev1.Pod, now time.Time) string {
	var b strings.Builder
	task, cluster := tfConfigSummary(pod)
	b.WriteString(kwok.LogLine(now, "I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is optimized to use available CPU instructions."))
	b.WriteString(kwok.LogLine(now, fmt.Sprintf("I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:457] Started server with target: grpc://%s (task %s; cluster %s)", pod.Name, task, cluster)))
	if text := pod.Annotations[kwok.SimLogAnnotation]; text != "" {
		for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
			b.WriteString(kwok.LogLine(now, line))
		}
	}
	return b.String()
}

// tfConfigSummary reads the task and cluster sizes from the tensorflow
// container's TF_CONFIG; a single-replica job has none.
func tfConfigSummary(pod *corev1.Pod) (task, cluster string) {
	task, cluster = pod.Labels[kubeflowv1.ReplicaTypeLabel]+":"+pod.Labels[kubeflowv1.ReplicaIndexLabel], "local"
	for _, c := range pod.Spec.Containers {
		for _, env := range c.Env {
			if c.Name != kubeflowv1.ContainerName || env.Name != "TF_CONFIG" {
				continue
			}
			var cfg struct {
				Cluster map[string][]string `json:"cluster"`
			}
			if json.Unmarshal([]byte(env.Value), &cfg) != nil {
				continue
			}
			var parts []string
			for _, rtype := range []string{"chief", "master", "ps", "worker", "evaluator"} {
				if n := len(cfg.Cluster[rtype]); n > 0 {
					parts = append(parts, fmt.Sprintf("%s=%d", rtype, n))
				}
			}
			cluster = strings.Join(parts, " ")
		}
	}
	return task, cluster
}

// stepLine is the log line of training step n: a loss that falls.
func stepLine(n int) string {
	loss := 2.3*math.Exp(-float64(n)/20) + 0.05
	return fmt.Sprintf("step %d: loss = %.4f", n*100, loss)
}

// appendLines adds lines to a log file; a failed write loses the lines,
// which is fine for a simulation.
func appendLines(file string, at time.Time, lines ...string) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	for _, line := range lines {
		_, _ = f.WriteString(kwok.LogLine(at, line))
	}
}
