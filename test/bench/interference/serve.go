package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// hashBlock is the buffer each step of the online service's work hashes.
const hashBlock = 1024

// runServe is the online service: net/http on a free port of 127.0.0.1,
// each request costing a fixed amount of CPU. It times every request
// itself, from reading it to writing its last byte, and prints those
// times when the bench says "dump": "s <read, unix ns> <ns>" lines, then
// "end".
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
	rec := &serverTimes{}
	go dumpOnCommand(rec, os.Stdout)
	fmt.Printf("ready %s\n", ln.Addr())
	body := func() []byte { sum := burn(*iterations); return []byte(hex.EncodeToString(sum[:8]) + "\n") }
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			b := body()
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			_, _ = w.Write(b)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if err := srv.Serve(&timedListener{Listener: ln, rec: rec}); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// serverTimes are the requests served since the last dump.
type serverTimes struct {
	mu    sync.Mutex
	read  []int64 // unix ns
	taken []int64 // ns
}

func (s *serverTimes) add(read, done time.Time) {
	s.mu.Lock()
	s.read = append(s.read, read.UnixNano())
	s.taken = append(s.taken, int64(done.Sub(read)))
	s.mu.Unlock()
}

func dumpOnCommand(s *serverTimes, out io.Writer) {
	for cmd := range commands {
		if cmd != "dump" {
			continue
		}
		s.mu.Lock()
		read, taken := s.read, s.taken
		s.read, s.taken = nil, nil
		s.mu.Unlock()
		w := bufio.NewWriterSize(out, 1<<20)
		for i := range read {
			fmt.Fprintf(w, "s %d %d\n", read[i], taken[i])
		}
		fmt.Fprintln(w, "end")
		_ = w.Flush()
	}
}

// timedListener hands out connections that time their requests.
type timedListener struct {
	net.Listener
	rec *serverTimes
}

func (l *timedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &timedConn{Conn: c, rec: l.rec}, nil
}

// timedConn times each request on a keep-alive connection: from the
// first read that returns its bytes to the write of its response, which
// net/http makes in one write for a small body with a Content-Length.
// The client sends a request only after the last response, so reads and
// writes alternate.
type timedConn struct {
	net.Conn
	rec       *serverTimes
	mu        sync.Mutex
	readAt    time.Time
	inRequest bool
}

func (c *timedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		if !c.inRequest {
			c.readAt, c.inRequest = time.Now(), true
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *timedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	done := time.Now()
	c.mu.Lock()
	if c.inRequest && err == nil {
		c.rec.add(c.readAt, done)
	}
	c.inRequest = false
	c.mu.Unlock()
	return n, err
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

// readServerSamples reads a dump: the requests read in [from, to), as
// samples timed from their read.
func readServerSamples(lines <-chan string, from, to time.Time) ([]sample, error) {
	var out []sample
	for line := range lines {
		if line == "end" {
			return out, nil
		}
		var read, taken int64
		if _, err := fmt.Sscanf(line, "s %d %d", &read, &taken); err != nil {
			return nil, fmt.Errorf("the online service printed %q: %w", line, err)
		}
		at := time.Unix(0, read)
		if !at.Before(from) && at.Before(to) {
			out = append(out, sample{due: at, latency: time.Duration(taken)})
		}
	}
	return nil, errors.New("the online service exited before it dumped its times (see its error above)")
}
