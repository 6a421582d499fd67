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

// FromWire is obj encoded and decoded again as protobuf into into: every
// string in its own allocation, as an informer holds a decoded object.
func FromWire[P interface{ Unmarshal([]byte) error }](tb testing.TB, obj interface{ Marshal() ([]byte, error) }, into P) P {
	tb.Helper()
	data, err := obj.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	if err := into.Unmarshal(data); err != nil {
		tb.Fatal(err)
	}
	return into
}
