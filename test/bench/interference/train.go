package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// runTrain is the training-like workload: dense float64 matrix
// multiplication, blocked for the caches, one goroutine per CPU pulling
// row blocks of each product. It prints the floating-point operations
// done so far ("flop <n>") every 100 ms.
func runTrain(args []string) error {
	fs := flag.NewFlagSet(roleTrain, flag.ContinueOnError)
	n := fs.Int("matrix", 384, "Side of the square matrices")
	block := fs.Int("block", 64, "Side of a block")
	threads := fs.Int("threads", runtime.NumCPU(), "Goroutines multiplying, and GOMAXPROCS")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := awaitStart(); err != nil {
		return err
	}
	runtime.GOMAXPROCS(*threads)
	var flop atomic.Int64
	// The first report comes before any work: a workload starved of all
	// CPU still says it did nothing.
	if err := report(flop.Load()); err != nil {
		return err
	}
	m := newMatmul(*n, *block)
	for range *threads {
		go m.work(&flop)
	}
	for range time.Tick(100 * time.Millisecond) {
		if err := report(flop.Load()); err != nil {
			return err
		}
	}
	return nil
}

func report(flop int64) error {
	if _, err := fmt.Fprintf(os.Stdout, "flop %d\n", flop); err != nil {
		return fmt.Errorf("reporting to the bench: %w", err)
	}
	return nil
}

// matmul computes a × b over and over; the workers share each product's
// row blocks through next, and each writes its rows to a buffer of its
// own, so that no two workers write the same memory.
type matmul struct {
	n, block int
	a, b     []float64
	mu       sync.Mutex
	next     int // the next row block of the current product
}

func newMatmul(n, block int) *matmul {
	m := &matmul{n: n, block: block, a: make([]float64, n*n), b: make([]float64, n*n)}
	for i := range m.a {
		m.a[i], m.b[i] = rand.Float64(), rand.Float64()
	}
	return m
}

// take hands out the next row block, starting a new product after the
// last one.
func (m *matmul) take() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	row := m.next
	m.next += m.block
	if m.next >= m.n {
		m.next = 0
	}
	return row
}

func (m *matmul) work(flop *atomic.Int64) {
	perBlock := int64(2 * m.block * m.n * m.n)
	c := make([]float64, m.block*m.n)
	for {
		m.rowBlock(m.take(), c)
		flop.Add(perBlock)
	}
}

// rowBlock computes rows [r, r+block) of the product into c, k and j
// blocked so that a block of b stays in cache while the rows reuse it.
func (m *matmul) rowBlock(r int, c []float64) {
	n, bs := m.n, m.block
	clear(c)
	for kk := 0; kk < n; kk += bs {
		for jj := 0; jj < n; jj += bs {
			for i := r; i < r+bs; i++ {
				ci := c[(i-r)*n+jj : (i-r)*n+jj+bs]
				for k := kk; k < kk+bs; k++ {
					aik := m.a[i*n+k]
					bk := m.b[k*n+jj : k*n+jj+bs]
					for j := range ci {
						ci[j] += aik * bk[j]
					}
				}
			}
		}
	}
}
