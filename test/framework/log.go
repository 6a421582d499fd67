package framework

import (
	"os"
	"path/filepath"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// ManagerLog is where a suite's controller-runtime logger writes: the
// logs of the manager it runs in-process, and envtest's.
type ManagerLog int

const (
	// ManagerLogStderr writes to stderr errors only, everything with
	// BACKFILL_TEST_LOG=debug: the default.
	ManagerLogStderr ManagerLog = iota
	// ManagerLogFile writes from info up to manager.log in the suite's
	// logs, kept when the suite fails.
	ManagerLogFile
)

// setManagerLog sets controller-runtime's logger as to says; Run does so
// first, since controller-runtime drops the logs of a process that sets
// no logger within 30 s of starting.
func (s *Suite) setManagerLog(to ManagerLog) error {
	switch to {
	case ManagerLogStderr:
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(stderrLogLevel())))
	case ManagerLogFile:
		f, err := os.Create(filepath.Join(s.Logs, "manager.log"))
		if err != nil {
			return err
		}
		s.OnStop("the manager's log", f.Close)
		ctrl.SetLogger(zap.New(zap.WriteTo(f)))
	}
	return nil
}

// stderrLogLevel lets BACKFILL_TEST_LOG=debug show the manager's logs.
func stderrLogLevel() zapcore.Level {
	if os.Getenv("BACKFILL_TEST_LOG") == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
