package framework

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually polls cond until it holds, failing the test when Timeout
// passes first.
func Eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, Timeout, true, cond); err != nil {
		t.Fatalf("Waiting for %s: %v", what, err)
	}
}

// Consistently checks that bad stays false for the whole of quiet: the
// test of something that must not happen.
func Consistently(t *testing.T, what string, quiet time.Duration, bad func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), quiet)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return bad(context.Background()) // the poll's deadline is not the check's
	})
	if err == nil {
		t.Fatalf("%s happened, and must not", what)
	}
	if ctx.Err() == nil {
		t.Fatalf("Checking that %s does not happen: %v", what, err)
	}
}
