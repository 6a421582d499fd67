package devcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// The demo's online service: the pods of examples/online-web.yaml.
const (
	onlineNamespace = "online-business"
	onlineApp       = "web"
)

// onlineShare is the share of its CPU request an online pod uses at hour h
// (0 to 24) of the day: a sixth at night, rising through the morning to an
// afternoon peak near four fifths around 15:00, falling in the evening.
// Averaged over the day it is about 30%, as such services run.
func onlineShare(h float64) float64 {
	share := 0.16
	if h > 7 && h < 22 {
		share += 0.34 * math.Pow(math.Sin(math.Pi*(h-7)/15), 1.5)
	}
	d := (h - 15) / 1.2
	share += 0.3 * math.Exp(-d*d) // the afternoon peak
	return share
}

// jitter is a pod's own noise at a tick: within ±6%, the same for the same
// pod and tick, so that pods of one service do not move in lockstep.
func jitter(pod string, tick int64) float64 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", pod, tick)
	return 1 + 0.12*(float64(h.Sum32()%1000)/1000-0.5)
}

// onlineUse is what an online pod requesting cpuRequest and memRequest
// uses at hour h: CPU by onlineShare with jitter; memory from 40% of its
// request at night to 75% at the peak, moving more slowly than CPU.
func onlineUse(pod string, tick int64, h float64, cpuRequest, memRequest resource.Quantity) (cpu, mem resource.Quantity) {
	share := onlineShare(h)
	milli := int64(float64(cpuRequest.MilliValue()) * share * jitter(pod, tick))
	bytes := int64(float64(memRequest.Value()) * (0.4 + 0.35*(share-0.16)/0.64))
	return *resource.NewMilliQuantity(milli, resource.DecimalSI), *resource.NewQuantity(bytes&^(1<<20-1), resource.BinarySI)
}

// clock is the demo's compressed day: it starts at midnight when the
// cluster starts, and a whole day passes in dayLength.
type clock struct {
	start     time.Time
	dayLength time.Duration
}

// hour is the hour of the day (0 to 24) at t.
func (c clock) hour(t time.Time) float64 {
	into := t.Sub(c.start) % c.dayLength
	return 24 * float64(into) / float64(c.dayLength)
}

// String is the time of day, e.g. "day 1 15:20".
func (c clock) at(t time.Time) string {
	day := int(t.Sub(c.start)/c.dayLength) + 1
	h := c.hour(t)
	return fmt.Sprintf("day %d %02d:%02d", day, int(h), int(math.Mod(h*60, 60)))
}

// runOnlineDay makes the online service's simulated use follow the day: a
// few times per simulated hour it sets the kwok usage annotations of each
// of its pods, until ctx ends.
func runOnlineDay(ctx context.Context, c client.Client, day clock) {
	every := max(day.dayLength/(24*6), 5*time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := int64(0); ; n++ {
		if err := setOnlineUse(ctx, c, day.hour(time.Now()), n); err != nil && ctx.Err() == nil {
			ctrl.Log.V(1).Info("Setting the online service's use", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// setOnlineUse annotates every running online pod with its use at hour h.
func setOnlineUse(ctx context.Context, c client.Client, h float64, tick int64) error {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(onlineNamespace), client.MatchingLabels{"app": onlineApp}); err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || len(p.Spec.Containers) == 0 {
			continue
		}
		r := p.Spec.Containers[0].Resources.Requests
		cpu, mem := onlineUse(p.Name, tick, h, r[corev1.ResourceCPU], r[corev1.ResourceMemory])
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			kwok.UsageCPUAnnotation: cpu.String(), kwok.UsageMemoryAnnotation: mem.String(),
		}}})
		if err != nil {
			return err
		}
		if err := c.Patch(ctx, p, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
