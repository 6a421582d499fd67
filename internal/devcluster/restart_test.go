package devcluster

import (
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// helperEnv makes the test binary stand in for a component: it runs
// until SIGTERM.
const helperEnv = "BACKFILL_DEVCLUSTER_TEST_COMPONENT"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		<-term
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A component killed under RestartComponents is started again with the
// same arguments, its new PID is recorded in the state, and Stop stops
// the new process; the cluster does not end.
func TestRestartComponents(t *testing.T) {
	t.Setenv(helperEnv, "1")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, stateDir := t.TempDir(), t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "component")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(stateDir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{
		opts:     Options{BinDir: bin, StateDir: stateDir, RestartComponents: true},
		out:      io.Discard,
		state:    &State{PID: os.Getpid()},
		commands: map[string][]string{},
	}
	if err := c.startChild("component", "127.0.0.1:1", "-test.run=^$"); err != nil {
		t.Fatal(err)
	}
	first := c.state.Components[0].PID
	died := c.Done()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var second int
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		s, err := ReadState(stateDir)
		if err != nil {
			return false, nil
		}
		second = s.Components[0].PID
		return second != first && processAlive(second), nil
	})
	if err != nil {
		t.Fatalf("The killed component (pid %d) was not started again: %v", first, err)
	}
	select {
	case name := <-died:
		t.Fatalf("Done reported %s although it was restarted", name)
	default:
	}
	if errs := c.Stop(); len(errs) > 0 {
		t.Fatalf("Stop: %v", errs)
	}
	if processAlive(second) {
		t.Errorf("The restarted component (pid %d) still runs after Stop", second)
	}
}
