// Package cli holds backfill's commands, kubectl-style.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/internal/nodeagent"
)

// Execute runs the command line and returns the process exit code: 0 on
// success, 1 when the command failed, 2 when it was called wrongly.
func Execute() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRootCommand()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", explainForbidden(err))
		if isUsageError(err) {
			return 2
		}
		return 1
	}
	return 0
}

// NewRootCommand returns the whole command tree, named backfill or, when
// run as kubectl-backfill, kubectl backfill. Tests read its flags too.
func NewRootCommand() *cobra.Command {
	name := "backfill"
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") {
		name = "kubectl backfill"
	}
	root := &cobra.Command{
		Use:           name,
		Short:         "TensorFlow training in the idle capacity of online Kubernetes clusters",
		SilenceUsage:  true,
		SilenceErrors: true,
		// cobra names a command by the first word of Use; the display name
		// keeps "kubectl backfill" whole in help and errors.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: name},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(manager.NewCommand(), nodeagent.NewCommand(), newDevCommand())
	root.AddCommand(newTopCommand())
	root.AddCommand(newDoctorCommand())
	root.AddCommand(newSubmitCommand(), newGetCommand(), newDescribeCommand(), newLogsCommand(), newWaitCommand())
	addVersion(root)
	root.AddCommand(newAlertRelayCommand())
	return root
}

// usageError marks errors in how a command was called.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func isUsageError(err error) bool {
	var usage usageError
	return errors.As(err, &usage) || strings.Contains(err.Error(), "unknown command") || strings.Contains(err.Error(), "accepts ")
}
