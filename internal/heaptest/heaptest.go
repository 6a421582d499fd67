// Package heaptest measures what objects kept in an informer store cost
// in heap, for benchmarks of cache transforms.
package heaptest

import (
	"runtime"
	"testing"

	toolscache "k8s.io/client-go/tools/cache"
)

// PerObject is the heap that n objects, built one by one and kept in an
// informer store, hold once the garbage is collected. The heap is the
// whole process's: call it from a benchmark, which runs alone.
func PerObject(tb testing.TB, n int, build func(int) any) uint64 {
	tb.Helper()
	store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	before := liveHeap()
	for i := range n {
		if err := store.Add(build(i)); err != nil {
			tb.Fatal(err)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(store)
	if after < before {
		return 0
	}
	return (after - before) / uint64(n)
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
