package devcluster

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/gpusim"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/tide"
)

// The demo's GPU inference: an online Deployment on the GPU nodes that
// real KEDA scales with cron triggers on the compressed day, few replicas
// at night and every GPU from the morning to the evening, so that the
// night's idle GPUs are lent to training (GPU loans) and taken back before
// the morning.
const (
	inferenceName = "inference"
	// inferencePodGPUs are the GPUs of one inference pod.
	inferencePodGPUs = 2
	// inferenceNightReplicas is the Deployment's replicas outside its
	// window (the ScaledObject's minReplicaCount).
	inferenceNightReplicas = 1
	// inferenceMorning and inferenceEvening are the hours of the
	// compressed day when the inference needs every GPU.
	inferenceMorning, inferenceEvening = 7.0, 21.0
	// inferenceGPUUtil is the GPU utilisation the simulated
	// dcgm-exporter reports for an inference pod's GPUs.
	inferenceGPUUtil = "55"
	// gpuModel is the product label of the simulated GPU nodes, the GPU
	// loans' pool.
	gpuModel = "NVIDIA-A100-SXM4-80GB"
)

// inferenceGPUs is the GPUs of one inference pod: 2, or a whole node's
// when a node has fewer.
func (o Options) inferenceGPUs() int { return min(inferencePodGPUs, o.GPUsPerNode) }

// inferenceDayReplicas are the inference replicas inside its window: as
// many as the GPU nodes hold, every GPU.
func (o Options) inferenceDayReplicas() int32 {
	return int32(o.GPUNodes * (o.GPUsPerNode / o.inferenceGPUs()))
}

// runsInference says whether the demo runs the GPU inference, and with it
// KEDA: the demo on GPU nodes where the day's replicas exceed the night's.
func (o Options) runsInference() bool {
	return o.Demo && o.GPUNodes > 0 && o.inferenceDayReplicas() > inferenceNightReplicas
}

// validateInferenceDay says why the day cannot be written as KEDA cron
// windows: cron counts whole minutes and repeats daily, so the day must be
// whole minutes that divide 24 hours.
func validateInferenceDay(day time.Duration) error {
	if day%time.Minute != 0 || (24*time.Hour)%day != 0 {
		return fmt.Errorf("--day=%v: the GPU inference's KEDA cron windows need a day of whole minutes that divides 24h, e.g. 6m, 12m, 24m, 30m or 1h (or --gpu-nodes=0 for no GPU inference)", day)
	}
	return nil
}

// cronWindows are KEDA cron triggers, in UTC, that hold desired replicas
// from hour from to hour to (0 to 24, from < to) of every compressed day of
// c. c's start must be a whole minute and its day whole minutes dividing
// 24 hours (validateInferenceDay); the hours are rounded to whole minutes
// of real time. The windows repeat every day length, which is not a cron
// period: they repeat exactly every lcm(day, 1h) minutes, P, a whole
// number of hours dividing a day. Each of the P/day windows in P is a
// trigger of its own, starting at its minute of every P/60-th hour.
func (c clock) cronWindows(from, to float64, desired int32) ([]tide.CronTrigger, error) {
	if err := validateInferenceDay(c.dayLength); err != nil {
		return nil, err
	}
	if c.start.Truncate(time.Minute) != c.start {
		return nil, fmt.Errorf("the day starts at %v, not a whole minute", c.start)
	}
	day := int(c.dayLength / time.Minute)
	startOff := int(math.Round(from / 24 * float64(day)))
	endOff := int(math.Round(to / 24 * float64(day)))
	if startOff < 0 || endOff <= startOff || endOff-startOff >= day {
		return nil, fmt.Errorf("window %.1f h to %.1f h of a %v day: it must start before it ends, within one day, and last at least a whole minute", from, to, c.dayLength)
	}
	period := day * 60 / gcd(day, 60)
	base := c.start.UTC().Hour()*60 + c.start.UTC().Minute()
	cron := func(minute int) string {
		minute %= period
		step, hour := period/60, minute/60
		hours := "*"
		switch {
		case step == 24:
			hours = strconv.Itoa(hour)
		case step > 1:
			hours = fmt.Sprintf("%d-23/%d", hour, step)
		}
		return fmt.Sprintf("%d %s * * *", minute%60, hours)
	}
	var triggers []tide.CronTrigger
	for j := range period / day {
		triggers = append(triggers, tide.CronTrigger{
			Timezone: "UTC", DesiredReplicas: desired,
			Start: cron(base + startOff + j*day), End: cron(base + endOff + j*day),
		})
	}
	return triggers, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// inferenceDeployment is the GPU inference at its night's replicas: online
// (no offline PriorityClass), its pods on the GPU nodes taking
// inferenceGPUs each, the simulated dcgm-exporter reporting their GPUs
// busy at inferenceGPUUtil percent.
func (o Options) inferenceDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": inferenceName}
	gpus := *resource.NewQuantity(int64(o.inferenceGPUs()), resource.DecimalSI)
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourceName(kwok.GPUResource): gpus}
	replicas := int32(inferenceNightReplicas)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: onlineNamespace, Name: inferenceName},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{gpusim.UtilAnnotation: inferenceGPUUtil}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{kwok.NodeTypeLabel: kwok.NodeTypeGPU, colocation.GPUModelLabel: gpuModel},
					Containers: []corev1.Container{{Name: "server", Image: "registry.example.com/shop/inference:1.0",
						Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}},
				},
			},
		},
	}
}

// inferenceScaledObject scales the inference to every GPU inside
// [inferenceMorning, inferenceEvening) of each compressed day and to
// inferenceNightReplicas outside. Its HPA scales down at once (no
// stabilization window, which would last hours of the compressed day).
func (o Options) inferenceScaledObject(day clock) (*unstructured.Unstructured, error) {
	windows, err := day.cronWindows(inferenceMorning, inferenceEvening, o.inferenceDayReplicas())
	if err != nil {
		return nil, err
	}
	var triggers []any
	for _, w := range windows {
		triggers = append(triggers, map[string]any{
			"type": "cron",
			"metadata": map[string]any{
				"timezone": w.Timezone, "start": w.Start, "end": w.End, "desiredReplicas": strconv.Itoa(int(w.DesiredReplicas)),
			},
		})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1",
		"kind":       "ScaledObject",
		"metadata":   map[string]any{"namespace": onlineNamespace, "name": inferenceName},
		"spec": map[string]any{
			"scaleTargetRef":  map[string]any{"name": inferenceName},
			"pollingInterval": int64(5),
			"minReplicaCount": int64(inferenceNightReplicas),
			"maxReplicaCount": int64(o.inferenceDayReplicas()),
			"advanced": map[string]any{
				"horizontalPodAutoscalerConfig": map[string]any{
					"behavior": map[string]any{
						"scaleDown": map[string]any{"stabilizationWindowSeconds": int64(0)},
					},
				},
			},
			"triggers": triggers,
		},
	}}, nil
}

// loadInference creates the GPU inference and its ScaledObject.
func (c *Cluster) loadInference(ctx context.Context) error {
	so, err := c.opts.inferenceScaledObject(c.day)
	if err != nil {
		return err
	}
	if err := ensureNamespace(ctx, c.client, onlineNamespace); err != nil {
		return err
	}
	if err := c.client.Create(ctx, c.opts.inferenceDeployment()); err != nil {
		return fmt.Errorf("creating the GPU inference Deployment: %w", err)
	}
	if err := c.client.Create(ctx, so); err != nil {
		return fmt.Errorf("creating the GPU inference's ScaledObject: %w", err)
	}
	fmt.Fprintf(c.out, "  created deployment %s/%s: %d pod of %d GPUs at night, %d (every GPU) from %02.0f:00 to %02.0f:00, scaled by KEDA's cron triggers (scaledobject %s/%s)\n",
		onlineNamespace, inferenceName, inferenceNightReplicas, c.opts.inferenceGPUs(), c.opts.inferenceDayReplicas(), inferenceMorning, inferenceEvening, onlineNamespace, inferenceName)
	return nil
}
