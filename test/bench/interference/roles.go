package main

import (
	"bufio"
	"fmt"
	"os"
)

// The workloads are this binary started again with a role: the bench
// moves each into its cgroup before it does any work.
const (
	roleServe = "serve"
	roleTrain = "train"
	roleLoad  = "load"
)

// commands are the lines the bench sends a workload after "go".
var commands = make(chan string, 16)

// awaitStart blocks until the bench says go (one line on stdin), then
// passes the bench's later lines to commands in the background: when the
// bench closes stdin or dies, the workload exits, so that no workload
// outlives the bench.
func awaitStart() error {
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return fmt.Errorf("waiting for the bench to start the workload: %w", in.Err())
	}
	go func() {
		for in.Scan() {
			commands <- in.Text()
		}
		os.Exit(0)
	}()
	return nil
}
