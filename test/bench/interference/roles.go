package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// The workloads are this binary started again with a role: the bench
// moves each into its cgroup before it does any work.
const (
	roleServe = "serve"
	roleTrain = "train"
)

// awaitStart blocks until the bench says go (one line on stdin), then
// watches stdin in the background: when the bench closes it or dies, the
// workload exits, so that no workload outlives the bench.
func awaitStart() error {
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		return fmt.Errorf("waiting for the bench to start the workload: %w", err)
	}
	go func() {
		_, _ = io.Copy(io.Discard, in)
		os.Exit(0)
	}()
	return nil
}
