package nodefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// readString reads a one-value cgroup or /proc file.
func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fileError("read", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(path string) (int64, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: not an integer: %w", path, err)
	}
	return n, nil
}

// readKeyed reads key's value from a flat keyed file of "key value" lines (cpu.stat, memory.stat).
func readKeyed(path, key string) (int64, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(s) {
		fields := strings.Fields(line)
		if len(fields) != 2 || fields[0] != key {
			continue
		}
		n, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read %s: %s is not an integer: %w", path, key, err)
		}
		return n, nil
	}
	return 0, fmt.Errorf("read %s: no %q line (is this the cgroup version the agent detected?)", path, key)
}

// writeFile writes one value to a cgroup file.
func (f *FS) writeFile(path, value string) error {
	write := f.write
	if write == nil {
		write = writeCgroupFile
	}
	if err := write(path, value); err != nil {
		return fileError("write "+strconv.Quote(value)+" to", path, err)
	}
	return nil
}

func writeCgroupFile(path, value string) error {
	// No O_CREATE: a missing cgroup file is an error to report, never a new plain file.
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = file.WriteString(value)
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	return err
}

// fileError says what failed on which file and, for the errors a node agent meets, how to fix it.
func fileError(op, path string, err error) error {
	// The path is in our message already; keep the errno, which errors.Is still finds.
	if pathErr, ok := errors.AsType[*fs.PathError](err); ok {
		err = pathErr.Err
	}
	if hint := fixFor(err); hint != "" {
		return fmt.Errorf("%s %s: %w: %s", op, path, err, hint)
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}

func fixFor(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "the cgroup is gone (its pod was deleted) or this controller is not there; " +
			"check that the host's /sys/fs/cgroup is mounted and --kubelet-cgroup-root is the kubelet's --cgroup-root"
	case errors.Is(err, syscall.EROFS):
		return "the cgroup filesystem is mounted read-only; mount the host's /sys/fs/cgroup read-write (hostPath volume without readOnly)"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "permission denied; run the agent as root (UID 0) with the host's /sys/fs/cgroup mounted read-write"
	case errors.Is(err, syscall.EINVAL):
		return "the kernel refused the value; on cgroup v1 a child's CPU quota may not exceed its parent's, " +
			"so lift the parent's (the QoS group's) quota first"
	}
	return ""
}
