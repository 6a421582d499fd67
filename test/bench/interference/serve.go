package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"
)

// hashBlock is the buffer each step of the online service's work hashes.
const hashBlock = 1024

// runServe is the online service: net/http on a free port of 127.0.0.1,
// each request costing a fixed amount of CPU.
func runServe(args []string) error {
	fs := flag.NewFlagSet(roleServe, flag.ContinueOnError)
	iterations := fs.Int("iterations", 1, "sha256 rounds over a 1 KiB buffer per request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := awaitStart(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	fmt.Printf("ready %s\n", ln.Addr())
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { handle(w, *iterations) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

func handle(w http.ResponseWriter, iterations int) {
	sum := burn(iterations)
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(hex.EncodeToString(sum[:8]) + "\n"))
}

// burn hashes a buffer n times, each round feeding the last digest back in
// so that no round can be skipped.
func burn(n int) [sha256.Size]byte {
	var buf [hashBlock]byte
	var sum [sha256.Size]byte
	for range n {
		copy(buf[:], sum[:])
		sum = sha256.Sum256(buf[:])
	}
	return sum
}

// calibrateWork finds how many rounds of burn cost work of CPU on this
// machine. It keeps the fastest of several tries: anything else running
// can only slow a try down.
func calibrateWork(work time.Duration) (iterations int, perRound time.Duration) {
	const rounds = 2000
	best := time.Duration(1 << 62)
	for range 15 {
		began := time.Now()
		burn(rounds)
		best = min(best, time.Since(began))
	}
	perRound = best / rounds
	return max(1, int(work/max(perRound, 1))), perRound
}
