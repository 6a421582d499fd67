package manager

import (
	"io/fs"
	"testing"
)

func TestCgroupMemoryLimit(t *testing.T) {
	v2, v1 := cgroupMemoryLimits[0], cgroupMemoryLimits[1]
	cases := map[string]struct {
		files    map[string]string
		want     int64
		wantPath string
	}{
		"cgroup v2 with a limit": {files: map[string]string{v2: "536870912\n"}, want: 512 << 20, wantPath: v2},
		"cgroup v2 without":      {files: map[string]string{v2: "max\n"}, wantPath: v2},
		"cgroup v1 with a limit": {files: map[string]string{v1: "268435456\n"}, want: 256 << 20, wantPath: v1},
		"cgroup v1 without":      {files: map[string]string{v1: "9223372036854771712\n"}, wantPath: v1},
		"no cgroup files":        {},
		"v2 wins over v1":        {files: map[string]string{v2: "1073741824", v1: "268435456"}, want: 1 << 30, wantPath: v2},
		"garbage is no limit":    {files: map[string]string{v2: "lots"}, wantPath: v2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			read := func(path string) ([]byte, error) {
				if v, ok := tc.files[path]; ok {
					return []byte(v), nil
				}
				return nil, fs.ErrNotExist
			}
			got, path := cgroupMemoryLimit(read)
			if got != tc.want || path != tc.wantPath {
				t.Errorf("cgroupMemoryLimit = %d from %q, want %d from %q", got, path, tc.want, tc.wantPath)
			}
		})
	}
}
