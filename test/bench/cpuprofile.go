package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// cpuProfiler takes back-to-back one-second CPU profiles of a process
// (the manager from its pprof endpoint, or kube-apiserver) until stopped,
// so that the profile covers a run whose length is not known in advance;
// finish merges them into one.
type cpuProfiler struct {
	dir, name string
	stopping  atomic.Bool
	done      chan struct{}
	chunks    []string
	err       error
}

// profileChunkSeconds is the length of each profile taken; stop waits at
// most this long for the last one.
const profileChunkSeconds = 1

// startCPUProfile starts profiling with get, which reads one CPU profile
// of profileChunkSeconds; the chunks go to dir, named after name.
func startCPUProfile(ctx context.Context, get func(context.Context) ([]byte, error), dir, name string) *cpuProfiler {
	p := &cpuProfiler{dir: dir, name: name, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; !p.stopping.Load(); i++ {
			data, err := get(ctx)
			if err != nil {
				p.err = err
				return
			}
			path := filepath.Join(dir, fmt.Sprintf("%s.chunk%04d.pb.gz", name, i))
			if err := os.WriteFile(path, data, 0o600); err != nil {
				p.err = err
				return
			}
			p.chunks = append(p.chunks, path)
		}
	}()
	return p
}

// managerCPUProfile reads one CPU profile of profileChunkSeconds from the
// manager's pprof endpoint at addr.
func managerCPUProfile(addr string) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) { return getCPUProfile(ctx, addr) }
}

// apiserverCPUProfile reads one CPU profile of profileChunkSeconds from
// kube-apiserver's own /debug/pprof, as the harness's admin.
func (c *cluster) apiserverCPUProfile(ctx context.Context) ([]byte, error) {
	data, err := c.kube.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(profileChunkSeconds)).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading kube-apiserver's CPU profile: %w", err)
	}
	return data, nil
}

// getCPUProfile reads one CPU profile of profileChunkSeconds.
func getCPUProfile(ctx context.Context, addr string) ([]byte, error) {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, profileChunkSeconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the manager's CPU profile: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the manager's CPU profile: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the manager's CPU profile: %s: %s", resp.Status, bytes.TrimSpace(data))
	}
	return data, nil
}

// cpuProfile is a finished profile: where it is and its top entries.
type cpuProfile struct {
	path      string
	heap      string   // a heap profile taken as the run ended, with its allocations since the start
	flat, cum []string // `go tool pprof -top` lines, header first
}

// finish waits for the last chunk, merges the chunks into dir/name.pb.gz
// with `go tool pprof -proto` and reads its top entries.
func (p *cpuProfiler) finish() (*cpuProfile, error) {
	p.stopping.Store(true)
	<-p.done
	if p.err != nil {
		return nil, p.err
	}
	if len(p.chunks) == 0 {
		return nil, fmt.Errorf("the CPU profile %s is empty: the run ended before its first second", p.name)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("merging the CPU profile %s needs the go command on PATH: %w", p.name, err)
	}
	out := &cpuProfile{path: filepath.Join(p.dir, p.name+".pb.gz")}
	if _, err := pprofTool(goTool, append([]string{"-proto", "-output=" + out.path}, p.chunks...)...); err != nil {
		return nil, err
	}
	for _, c := range p.chunks {
		_ = os.Remove(c)
	}
	if out.flat, err = pprofTop(goTool, out.path); err != nil {
		return nil, err
	}
	if out.cum, err = pprofTop(goTool, out.path, "-cum"); err != nil {
		return nil, err
	}
	return out, nil
}

// pprofTop is the first ten entries of `go tool pprof -top`, with the
// column header.
func pprofTop(goTool, path string, extra ...string) ([]string, error) {
	text, err := pprofTool(goTool, slices.Concat([]string{"-top", "-nodecount=10"}, extra, []string{path})...)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") {
			return lines[i:], nil
		}
	}
	return nil, fmt.Errorf("go tool pprof -top printed no table:\n%s", text)
}

func pprofTool(goTool string, args ...string) (string, error) {
	cmd := exec.Command(goTool, append([]string{"tool", "pprof"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	text, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return string(text), nil
}

// printCPUProfile prints where a profile of whose (the manager,
// kube-apiserver) is and its top entries.
func printCPUProfile(out io.Writer, whose, what string, p *cpuProfile) {
	if p == nil {
		return
	}
	fmt.Fprintf(out, "\nCPU profile of %s, %s: %s\n", whose, what, p.path)
	if p.heap != "" {
		fmt.Fprintf(out, "its allocations since its start: go tool pprof -sample_index=alloc_space %s\n", p.heap)
	}
	fmt.Fprintln(out, "top 10 by flat time:")
	for _, l := range p.flat {
		fmt.Fprintln(out, "  "+l)
	}
	fmt.Fprintln(out, "top 10 by cumulative time:")
	for _, l := range p.cum {
		fmt.Fprintln(out, "  "+l)
	}
}
