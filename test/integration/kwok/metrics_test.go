//go:build integration

package kwok

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

// A pod's usage annotations show in its node's emulated kubelet metrics:
// the CPU counter grows at 1.5 cores and the memory gauge reads 2Gi.
func TestUsageAnnotationsShowInResourceMetrics(t *testing.T) {
	pod := makePod("busy").OnNode(cpuNode).
		Annotation(simkwok.UsageCPUAnnotation, "1500m").
		Annotation(simkwok.UsageMemoryAnnotation, "2Gi").
		Create(t)
	running := waitForPod(t, pod, "Running", podPhaseIs(corev1.PodRunning))

	url := sim.ResourceMetricsURL(cpuNode)
	cpu := fmt.Sprintf(`container_cpu_usage_seconds_total{container="tensorflow",namespace=%q,pod=%q}`, namespace, pod.Name)
	memory := fmt.Sprintf(`container_memory_working_set_bytes{container="tensorflow",namespace=%q,pod=%q}`, namespace, pod.Name)
	started := fmt.Sprintf(`container_start_time_seconds{container="tensorflow",namespace=%q,pod=%q}`, namespace, pod.Name)

	// kwok integrates the usage between scrapes, so the counter appears at
	// 0 and grows from the second scrape on. Measure its rate over at
	// least two seconds of our own clock.
	var (
		firstSeen  time.Time
		firstValue float64
		last       map[string]float64
		lastErr    error
		rate       float64
	)
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		now := time.Now()
		last, lastErr = scrape(ctx, url)
		if lastErr != nil {
			return false, nil
		}
		v, ok := last[cpu]
		if !ok {
			return false, nil
		}
		if firstSeen.IsZero() {
			firstSeen, firstValue = now, v
			return false, nil
		}
		elapsed := now.Sub(firstSeen)
		if elapsed < 2*time.Second {
			return false, nil
		}
		rate = (v - firstValue) / elapsed.Seconds()
		return true, nil
	})
	if err != nil {
		t.Fatalf("no growing %s on %s (last error %v); last scrape: %v", cpu, url, lastErr, last)
	}
	// The two clocks differ by a scrape's latency, which on a loaded
	// machine can be a good fraction of a second.
	if rate < 1.2 || rate > 1.8 {
		t.Errorf("CPU usage rate = %.2f cores, want about 1.5", rate)
	}
	if got, want := last[memory], float64(2<<30); got != want {
		t.Errorf("%s = %v, want %v", memory, got, want)
	}
	// As a kubelet's: seconds since the epoch (kwok's own sample reports
	// seconds since the start instead).
	if got, want := last[started], float64(running.Status.StartTime.Unix()); got != want {
		t.Errorf("%s = %v, want the pod's start %v", started, got, want)
	}
}

// scrape reads a Prometheus text exposition into series -> value, a series
// being written exactly as exposed (name and labels).
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	series := map[string]float64{}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// name{labels} value [timestamp]; label values here hold no spaces.
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return nil, fmt.Errorf("malformed line %q", line)
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			return nil, fmt.Errorf("malformed value in %q: %w", line, err)
		}
		series[fields[0]] = v
	}
	return series, lines.Err()
}

// A pod that finished uses nothing: its CPU counter stops growing and its
// working set reads 0, whatever its usage annotations say, as a kubelet
// reports no use for exited containers.
func TestFinishedPodUsesNothing(t *testing.T) {
	pod := makePod("done").OnNode(cpuNode).
		Annotation(simkwok.UsageCPUAnnotation, "2").
		Annotation(simkwok.UsageMemoryAnnotation, "1Gi").
		Annotation(simkwok.SimDurationAnnotation, "2s").
		Create(t)
	waitForPod(t, pod, "Succeeded", podPhaseIs(corev1.PodSucceeded))

	url := sim.ResourceMetricsURL(cpuNode)
	cpu := fmt.Sprintf(`container_cpu_usage_seconds_total{container="tensorflow",namespace=%q,pod=%q}`, namespace, pod.Name)
	memory := fmt.Sprintf(`container_memory_working_set_bytes{container="tensorflow",namespace=%q,pod=%q}`, namespace, pod.Name)
	var first, last map[string]float64
	var firstSeen time.Time
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		s, err := scrape(ctx, url)
		if err != nil {
			return false, nil
		}
		if _, ok := s[cpu]; !ok {
			return false, nil
		}
		if first == nil {
			first, firstSeen = s, time.Now()
			return false, nil
		}
		last = s
		return time.Since(firstSeen) >= 2*time.Second, nil
	})
	if err != nil {
		t.Fatalf("scraping %s: %v; last scrape: %v", url, err, last)
	}
	if grew := last[cpu] - first[cpu]; grew != 0 {
		t.Errorf("%s grew by %v core-seconds after the pod finished, want 0", cpu, grew)
	}
	if got := last[memory]; got != 0 {
		t.Errorf("%s = %v after the pod finished, want 0", memory, got)
	}
}
