package nodefs

import "path/filepath"

// MemoryWorkingSet is group's memory that the kernel cannot simply drop, in bytes, as the kubelet counts it for
// evictions: v1 memory.usage_in_bytes - total_inactive_file (memory.stat); v2 memory.current - inactive_file. Never
// below 0.
func (f *FS) MemoryWorkingSet(group string) (int64, error) {
	dir := f.path(memoryCtl, group)
	usageFile, inactiveKey := "memory.usage_in_bytes", "total_inactive_file"
	if f.Version == V2 {
		usageFile, inactiveKey = "memory.current", "inactive_file"
	}
	usage, err := readInt(filepath.Join(dir, usageFile))
	if err != nil {
		return 0, err
	}
	inactive, err := readKeyed(filepath.Join(dir, "memory.stat"), inactiveKey)
	if err != nil {
		return 0, err
	}
	// The two files are not read atomically: usage can drop below inactive in between.
	return max(usage-inactive, 0), nil
}
