package kwok

import (
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeKwokEnv makes the test binary stand in for kwok: it records its
// arguments and environment, then serves /healthz on --server-address
// until SIGTERM ("serve"), or exits at once ("crash").
const fakeKwokEnv = "BACKFILL_FAKE_KWOK"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeKwokEnv) {
	case "":
		os.Exit(m.Run())
	case "crash":
		fmt.Println("fake kwok: no stages found")
		os.Exit(1)
	case "serve":
		os.Exit(fakeKwok())
	}
}

func fakeKwok() int {
	var address string
	for _, arg := range os.Args[1:] {
		if v, ok := strings.CutPrefix(arg, "--server-address="); ok {
			address = v
		}
	}
	record := strings.Join(os.Args[1:], "\n") + "\nKWOK_WORKDIR=" + os.Getenv("KWOK_WORKDIR") + "\n"
	if err := os.WriteFile(os.Getenv("FAKE_KWOK_RECORD"), []byte(record), 0o644); err != nil {
		fmt.Println(err)
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	srv := &http.Server{Addr: address, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		http.NotFound(w, r)
	})}
	go func() { _ = srv.ListenAndServe() }()
	<-term
	_ = srv.Close()
	return 0
}

// withFake runs the test binary as kwok in the given mode.
func withFake(t *testing.T, mode string) (binary, record string) {
	t.Helper()
	record = filepath.Join(t.TempDir(), "record")
	t.Setenv(fakeKwokEnv, mode)
	t.Setenv("FAKE_KWOK_RECORD", record)
	return os.Args[0], record
}

func TestStartRunsKwokOnLoopbackWithOurConfig(t *testing.T) {
	binary, record := withFake(t, "serve")
	state := t.TempDir()
	k, err := Start(Options{Binary: binary, Kubeconfig: "/path/to/kubeconfig", StateDir: state})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = k.Stop() })

	if !strings.HasPrefix(k.Address(), "127.0.0.1:") {
		t.Errorf("Address = %q, want 127.0.0.1:PORT", k.Address())
	}
	port := strings.TrimPrefix(k.Address(), "127.0.0.1:")
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--kubeconfig=/path/to/kubeconfig",
		"--config=" + filepath.Join(state, "kwok.yaml"),
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--server-address=" + k.Address(),
		"--node-ip=127.0.0.1",
		"--node-port=" + port,
		"--cidr=10.244.0.0/16",
		"--node-lease-duration-seconds=40",
		"KWOK_WORKDIR=" + filepath.Join(state, "workdir"),
	}
	if diff := cmp.Diff(want, strings.Fields(string(data))); diff != "" {
		t.Errorf("kwok's arguments and KWOK_WORKDIR (-want +got):\n%s", diff)
	}
	config, err := os.ReadFile(filepath.Join(state, "kwok.yaml"))
	if err != nil || string(config) != string(Config()) {
		t.Errorf("kwok.yaml is not Config() (read error %v)", err)
	}
	if got, want := k.ResourceMetricsURL("gpu-0"), "http://"+k.Address()+"/metrics/nodes/gpu-0/metrics/resource"; got != want {
		t.Errorf("ResourceMetricsURL = %q, want %q", got, want)
	}

	if err := k.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-k.Done():
	default:
		t.Fatal("kwok is still running after Stop")
	}
}

func TestStartReportsAKwokThatExits(t *testing.T) {
	binary, _ := withFake(t, "crash")
	state := t.TempDir()
	_, err := Start(Options{Binary: binary, Kubeconfig: "k", StateDir: state, StartTimeout: 20 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "exited while starting") || !strings.Contains(err.Error(), filepath.Join(state, "kwok.log")) {
		t.Fatalf("Start = %v, want an error saying kwok exited, naming its log", err)
	}
	log, _ := os.ReadFile(filepath.Join(state, "kwok.log"))
	if !strings.Contains(string(log), "no stages found") {
		t.Errorf("kwok.log = %q, want kwok's output", log)
	}
}

func TestStartNeedsTheBinary(t *testing.T) {
	_, err := Start(Options{Binary: filepath.Join(t.TempDir(), "kwok"), Kubeconfig: "k", StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "make tools") {
		t.Fatalf("Start = %v, want an error saying how to build kwok", err)
	}
}
