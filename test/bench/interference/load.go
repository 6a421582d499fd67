package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// loadPlan is an open loop: base requests per second from the start,
// burst per second from at on, until the end; request i is due at a time
// fixed in advance, whatever the service answers.
type loadPlan struct {
	base, burst float64
	at, length  time.Duration
}

// due is when request i is due, from the start.
func (p loadPlan) due(i int) time.Duration {
	before := p.base * p.at.Seconds()
	if float64(i) < before {
		return time.Duration(float64(i) / p.base * float64(time.Second))
	}
	return p.at + time.Duration((float64(i)-before)/p.burst*float64(time.Second))
}

// requests is how many requests are due before the end.
func (p loadPlan) requests() int {
	n := 0
	for p.due(n) < p.length {
		n++
	}
	return n
}

// sample is one online request: when it was due, how long it took from
// then until its last byte arrived (so a request the client could not
// send on time waits in the measurement too: no coordinated omission),
// and whether it failed.
type sample struct {
	due     time.Time
	latency time.Duration
	failed  bool
}

// request is the one request the client sends, over and over.
var request = []byte("GET / HTTP/1.1\r\nHost: online\r\n\r\n")

// runLoad is the load generator: it sends the plan's requests over a pool
// of keep-alive connections from the start time it is given, then prints
// one line per request: "c <due, ns from start> <latency ns> <0|1 failed>".
func runLoad(args []string) error {
	fs := flag.NewFlagSet(roleLoad, flag.ContinueOnError)
	addr := fs.String("addr", "", "The online service's host:port")
	var p loadPlan
	fs.Float64Var(&p.base, "rate", 100, "Requests per second")
	fs.Float64Var(&p.burst, "burst-rate", 100, "Requests per second from -burst-at on")
	fs.DurationVar(&p.at, "burst-at", 0, "When the burst begins, from the start")
	fs.DurationVar(&p.length, "length", time.Second, "How long requests are sent")
	startNS := fs.Int64("start", 0, "Unix time in ns of the first request")
	conns := fs.Int("connections", 64, "Keep-alive connections")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := awaitStart(); err != nil {
		return err
	}
	start := time.Unix(0, *startNS)
	results := generate(*addr, p, start, *conns)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	for i, r := range results {
		failed := 0
		if r.failed {
			failed = 1
		}
		fmt.Fprintf(w, "c %d %d %d\n", p.due(i), r.latency, failed)
	}
	fmt.Fprintln(w, "end")
	return w.Flush()
}

// requestTimeout is how long a request may take before it counts as
// failed, with the time it took.
const requestTimeout = 5 * time.Second

// generate sends the plan's requests: a dispatcher hands each to the
// connections when it is due, and each connection sends one at a time.
func generate(addr string, p loadPlan, start time.Time, conns int) []sample {
	n := p.requests()
	results := make([]sample, n)
	due := make(chan int, n)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{addr: addr}
			defer c.close()
			for i := range due {
				at := start.Add(p.due(i))
				if time.Since(at) > requestTimeout {
					// So far behind that it would time out anyway: an
					// overloaded service must not hold the bench for its
					// whole backlog.
					results[i] = sample{due: at, latency: time.Since(at), failed: true}
					continue
				}
				ok := c.do()
				results[i] = sample{due: at, latency: time.Since(at), failed: !ok}
			}
		}()
	}
	for i := range n {
		if wait := time.Until(start.Add(p.due(i))); wait > 0 {
			time.Sleep(wait)
		}
		due <- i
	}
	close(due)
	wg.Wait()
	return results
}

// client is one keep-alive connection, dialled on first use and again
// after an error.
type client struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
}

func (c *client) close() {
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// do sends the request and reads the whole response.
func (c *client) do() bool {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, requestTimeout)
		if err != nil {
			return false
		}
		c.conn, c.r = conn, bufio.NewReader(conn)
	}
	_ = c.conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := c.conn.Write(request); err != nil || readResponse(c.r) != nil {
		c.close()
		c.conn = nil
		return false
	}
	return true
}

// readResponse reads an HTTP/1.1 response with a Content-Length: the
// status line must say 200.
func readResponse(r *bufio.Reader) error {
	status, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200")) {
		return fmt.Errorf("response %q", bytes.TrimSpace(status))
	}
	length := -1
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(string(k), "Content-Length") {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return err
			}
		}
	}
	if length < 0 {
		return errors.New("response without Content-Length")
	}
	_, err = r.Discard(length)
	return err
}

// readLoadSamples reads runLoad's lines: the requests of a window, in
// order.
func readLoadSamples(lines <-chan string, start time.Time) ([]sample, error) {
	var out []sample
	for line := range lines {
		if line == "end" {
			return out, nil
		}
		var due, latency int64
		var failed int
		if _, err := fmt.Sscanf(line, "c %d %d %d", &due, &latency, &failed); err != nil {
			return nil, fmt.Errorf("the load generator printed %q: %w", line, err)
		}
		out = append(out, sample{due: start.Add(time.Duration(due)), latency: time.Duration(latency), failed: failed == 1})
	}
	return nil, errors.New("the load generator exited before it reported (see its error above)")
}
