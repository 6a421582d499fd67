package nodefs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDetect(t *testing.T) {
	cases := map[string]struct {
		dirs    []string // made under the cgroup root
		files   []string // made empty under the cgroup root
		parent  string
		noProc  bool
		unified bool // want Unified at root/unified
		want    *FS
		wantErr []string // each in the error
	}{
		"v1 cgroupfs": {
			dirs: []string{"cpu/kubepods", "cpuacct/kubepods", "memory/kubepods"},
			want: &FS{Version: V1, Driver: Cgroupfs},
		},
		"v1 systemd with cpu,cpuacct mounted together": {
			dirs: []string{"cpu,cpuacct/kubepods.slice", "memory/kubepods.slice"},
			want: &FS{Version: V1, Driver: Systemd},
		},
		"v1 under the kubelet's --cgroup-root": {
			dirs:   []string{"cpu/custom/kubepods", "cpuacct", "memory"},
			parent: "/custom",
			want:   &FS{Version: V1, Driver: Cgroupfs, Parent: "custom"},
		},
		"v1 systemd, hybrid: a unified hierarchy beside the controllers'": {
			dirs:    []string{"cpu/kubepods.slice", "cpuacct/kubepods.slice", "memory/kubepods.slice", "unified/kubepods.slice"},
			files:   []string{"unified/cgroup.controllers"},
			want:    &FS{Version: V1, Driver: Systemd},
			unified: true,
		},
		"v1 with a directory named unified that is no cgroup": {
			dirs: []string{"cpu/kubepods", "cpuacct/kubepods", "memory/kubepods", "unified"},
			want: &FS{Version: V1, Driver: Cgroupfs},
		},
		"v2 systemd": {
			files: []string{"cgroup.controllers"},
			dirs:  []string{"kubepods.slice"},
			want:  &FS{Version: V2, Driver: Systemd},
		},
		"v2 cgroupfs, --cgroup-root /": {
			files:  []string{"cgroup.controllers"},
			dirs:   []string{"kubepods"},
			parent: "/",
			want:   &FS{Version: V2, Driver: Cgroupfs},
		},
		"no cgroup filesystem": {
			dirs:    []string{"kubepods"},
			wantErr: []string{"no cgroup filesystem", "mount the host's /sys/fs/cgroup"},
		},
		"v1 without memory": {
			dirs:    []string{"cpu/kubepods", "cpuacct/kubepods"},
			wantErr: []string{"no memory hierarchy", "mount the host's whole /sys/fs/cgroup"},
		},
		"no kubepods": {
			dirs:    []string{"cpu/system.slice", "cpuacct", "memory"},
			wantErr: []string{"no kubepods.slice or kubepods cgroup", "set --kubelet-cgroup-root to the kubelet's --cgroup-root"},
		},
		"kubepods under another --cgroup-root": {
			dirs:    []string{"cpu/custom/kubepods", "cpuacct", "memory"},
			wantErr: []string{"set --kubelet-cgroup-root", `(now "/")`},
		},
		"both drivers' top cgroups": {
			files:   []string{"cgroup.controllers"},
			dirs:    []string{"kubepods", "kubepods.slice"},
			wantErr: []string{"both kubepods.slice and kubepods", "remove the one the kubelet does not use"},
		},
		"no /proc": {
			files:   []string{"cgroup.controllers"},
			dirs:    []string{"kubepods"},
			noProc:  true,
			wantErr: []string{"node's /proc", "--proc-root"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			root, proc := filepath.Join(dir, "cgroup"), filepath.Join(dir, "proc")
			mkdir(t, root)
			for _, d := range tc.dirs {
				mkdir(t, filepath.Join(root, d))
			}
			for _, file := range tc.files {
				writeFakeFile(t, filepath.Join(root, file), "")
			}
			if !tc.noProc {
				writeFakeFile(t, filepath.Join(proc, "stat"), "cpu  0 0 0 0\n")
			}

			got, err := Detect(root, tc.parent, proc)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Root, tc.want.ProcRoot = root, proc
			if tc.unified {
				tc.want.Unified = filepath.Join(root, "unified")
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(FS{})); diff != "" {
				t.Errorf("Detect (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetectMissingRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cgroup")
	_, err := Detect(root, "", "/proc")
	if err == nil || !strings.Contains(err.Error(), root+" does not exist: mount the host's /sys/fs/cgroup there") {
		t.Errorf("got %v, want an error saying to mount the host's /sys/fs/cgroup at %s", err, root)
	}
}

// A combined mount is read for both cpu and cpuacct files.
func TestCombinedMountReadsCPUAccounting(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "cgroup")
	writeFakeFile(t, filepath.Join(root, "cpu,cpuacct", "kubepods", "cpuacct.usage"), "1500000000")
	mkdir(t, filepath.Join(root, "memory", "kubepods"))
	writeFakeFile(t, filepath.Join(dir, "proc", "stat"), "cpu  0 0 0 0\n")
	f, err := Detect(root, "", filepath.Join(dir, "proc"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Exists("") {
		t.Error(`Exists("") = false for the top cgroup in cpu,cpuacct`)
	}
	usage, err := f.CPUUsage("")
	if err != nil || usage.Seconds() != 1.5 {
		t.Errorf("CPUUsage = %v, %v; want 1.5s", usage, err)
	}
	if _, err := os.Stat(filepath.Join(root, "cpuacct")); err == nil {
		t.Fatal("test tree has a separate cpuacct mount")
	}
}
