package process

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as the child process under test, so
// the tests need no other binary and never leave strays behind.
const helperEnv = "BACKFILL_PROCESS_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		// Behaves like a server: runs until SIGTERM.
		fmt.Println("serving")
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		<-term
		os.Exit(0)
	case "ignore-term":
		// Waiting on a signal that never comes keeps the helper alive (a
		// bare select{} would be reported as a deadlock).
		signal.Ignore(syscall.SIGTERM)
		never := make(chan os.Signal, 1)
		signal.Notify(never, syscall.SIGUSR1)
		fmt.Println("ignoring SIGTERM")
		<-never
	case "fail":
		fmt.Println("failing")
		os.Exit(3)
	}
}

func startHelper(t *testing.T, mode string) (*Process, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "helper.log")
	env := append(os.Environ(), helperEnv+"="+mode)
	p, err := Start(os.Args[0], nil, env, logPath)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	return p, logPath
}

// waitForLog polls the log until it holds want, so that a signal is sent
// only once the helper has installed its handler.
func waitForLog(t *testing.T, p *Process, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		data, _ := os.ReadFile(p.LogPath())
		if strings.Contains(string(data), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log never showed %q; it holds %q", want, data)
		}
		select {
		case <-p.Done():
			t.Fatalf("the helper exited before logging %q: %v", want, p.Wait())
		case <-tick.C:
		}
	}
}

func TestStopEndsAServerBySIGTERM(t *testing.T) {
	p, _ := startHelper(t, "serve")
	if p.PID() <= 0 {
		t.Fatalf("PID() = %d, want the child's pid", p.PID())
	}
	waitForLog(t, p, "serving")
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done is not closed after Stop returned")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("a second Stop: %v, want nil", err)
	}
}

func TestStopKillsAProcessIgnoringSIGTERM(t *testing.T) {
	p, _ := startHelper(t, "ignore-term")
	waitForLog(t, p, "ignoring SIGTERM")
	err := p.Stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "was killed") {
		t.Fatalf("Stop = %v, want an error saying it was killed", err)
	}
	if err := syscall.Kill(p.PID(), 0); err == nil {
		t.Errorf("pid %d still exists after Stop", p.PID())
	}
}

func TestWaitReportsTheExitAndTheLogKeepsTheOutput(t *testing.T) {
	p, logPath := startHelper(t, "fail")
	err := p.Wait()
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Wait = %v, want exit status 3", err)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "failing") {
		t.Errorf("log = %q, want the helper's output", data)
	}
}

func TestStartFailsForAMissingBinary(t *testing.T) {
	_, err := Start(filepath.Join(t.TempDir(), "no-such-binary"), nil, nil, filepath.Join(t.TempDir(), "log"))
	if err == nil {
		t.Fatal("Start of a missing binary succeeded")
	}
}
