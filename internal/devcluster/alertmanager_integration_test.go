//go:build integration

package devcluster

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/backfill-dev/backfill/internal/devcluster/alertsink"
	"github.com/backfill-dev/backfill/internal/devcluster/amconfig"
	"github.com/backfill-dev/backfill/test/framework"
)

// The local cluster's alerting path past Prometheus: the alertmanager.yml
// amtool accepts, the real Alertmanager started as `dev up` starts it, an
// alert posted to it as Prometheus posts one, listed by ActiveAlerts and
// delivered, grouped, to the sink's file; then resolved.
func TestAlertmanagerDeliversToTheSink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := resetStateDir(dir); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{
		opts:     Options{StateDir: dir, BinDir: framework.BinDir()},
		state:    &State{},
		commands: map[string][]string{},
	}
	if err := c.startAlertSink(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.servers[0].Close() })
	if err := c.startAlertmanager(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.procs[0].Stop(stopTimeout) })

	out, err := exec.CommandContext(ctx, filepath.Join(framework.BinDir(), "amtool"), "check-config",
		filepath.Join(c.alertmanagerDir(), "alertmanager.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("amtool check-config: %v\n%s", err, out)
	}

	startsAt := time.Now().UTC().Truncate(time.Second)
	post := func(endsAt time.Time) {
		t.Helper()
		body := `[{"labels":{"alertname":"BackfillTFJobFailed","namespace":"ml-dev","tfjob":"mnist","severity":"warning"},
			"annotations":{"summary":"TFJob ml-dev/mnist failed"},"startsAt":"` + startsAt.Format(time.RFC3339) + `","endsAt":"` + endsAt.Format(time.RFC3339) + `"}]`
		resp, err := http.Post(c.state.Alertmanager+"/api/v2/alerts", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("posting an alert: %s", resp.Status)
		}
	}
	post(time.Now().Add(time.Hour))

	active, err := ActiveAlerts(ctx, c.state.Alertmanager)
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 1 || active[0].Name() != "BackfillTFJobFailed" || active[0].Labels["tfjob"] != "mnist" ||
		len(active[0].Receivers) != 1 || active[0].Receivers[0] != amconfig.ReceiverName {
		t.Errorf("active alerts %+v, want BackfillTFJobFailed of ml-dev/mnist for %s", active, amconfig.ReceiverName)
	}
	firing := waitNotification(t, c.state.AlertSinkFile, "firing")
	wantGroup := map[string]string{"alertname": "BackfillTFJobFailed", "namespace": "ml-dev", "tfjob": "mnist"}
	if firing.Receiver != amconfig.ReceiverName || len(firing.Alerts) != 1 || !maps.Equal(firing.GroupLabels, wantGroup) {
		t.Errorf("firing notification %+v, want one alert for %s grouped by %v", firing, amconfig.ReceiverName, wantGroup)
	}

	post(time.Now().Add(-time.Second)) // ended: Alertmanager resolves it
	waitNotification(t, c.state.AlertSinkFile, "resolved")
}

// waitNotification waits for the sink to record a notification of status.
func waitNotification(t *testing.T, file, status string) alertsink.Notification {
	t.Helper()
	var found alertsink.Notification
	var last []alertsink.Notification
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		var err error
		if last, err = alertsink.Read(file); err != nil {
			return false, err
		}
		for _, n := range last {
			if n.Status == status {
				found = n
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("Waiting for a %s notification in %s: %v; recorded %+v", status, file, err, last)
	}
	return found
}

// The rule file the local Prometheus loads, with its scaled `for:`,
// passes `promtool check rules`.
func TestAlertRulesPassPromtool(t *testing.T) {
	c := &Cluster{opts: DefaultOptions()}
	file := filepath.Join(t.TempDir(), "backfill.rules.yaml")
	if err := c.writeAlertRules(file); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(framework.BinDir(), "promtool"), "check", "rules", file).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}
