package nodefs

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// stats is everything a test reads of one group.
type stats struct {
	Usage, Throttled time.Duration
	WorkingSet       int64
	Quota            Quota
}

func TestGroupStats(t *testing.T) {
	const group = "besteffort/podU"
	cases := map[string]struct {
		version Version
		files   map[string]string // controller/file -> content
		want    stats
	}{
		"v1": {
			version: V1,
			files: map[string]string{
				"cpuacct/cpuacct.usage":        "2500000000\n",
				"cpu/cpu.stat":                 "nr_periods 40\nnr_throttled 12\nthrottled_time 300000000\nnr_bursts 0\nburst_time 0\n",
				"cpu/cpu.cfs_quota_us":         "50000\n",
				"cpu/cpu.cfs_period_us":        "100000\n",
				"memory/memory.usage_in_bytes": "1048576000\n",
				"memory/memory.stat":           "cache 10\ninactive_file 5\ntotal_cache 200\ntotal_inactive_file 48576000\n",
			},
			want: stats{Usage: 2500 * time.Millisecond, Throttled: 300 * time.Millisecond, WorkingSet: 1000000000,
				Quota: Quota{Quota: 50000, Period: 100000}},
		},
		"v1 working set never below 0": {
			version: V1,
			files: map[string]string{
				"cpu/cpu.cfs_quota_us":         "-1\n",
				"memory/memory.usage_in_bytes": "100\n",
				"memory/memory.stat":           "total_inactive_file 4096\n",
			},
			want: stats{Quota: Quota{Quota: -1, Period: 100000}},
		},
		"v2": {
			version: V2,
			files: map[string]string{
				"cpu.stat":       "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 40\nnr_throttled 12\nthrottled_usec 300000\nnr_bursts 0\nburst_usec 0\n",
				"cpu.max":        "50000 100000\n",
				"memory.current": "1048576000\n",
				"memory.stat":    "anon 900000000\nfile 100000000\nactive_file 51424000\ninactive_file 48576000\n",
			},
			want: stats{Usage: 2500 * time.Millisecond, Throttled: 300 * time.Millisecond, WorkingSet: 1000000000,
				Quota: Quota{Quota: 50000, Period: 100000}},
		},
		"v2 no quota": {
			version: V2,
			files:   map[string]string{"cpu.max": "max 100000\n"},
			want:    stats{Quota: Quota{Quota: -1, Period: 100000}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeNode(t, tc.version, Cgroupfs)
			addGroup(t, f, group, -1)
			for name, content := range tc.files {
				controller, file := filepath.Split(name)
				writeFakeFile(t, filepath.Join(f.path(strings.TrimSuffix(controller, "/"), group), file), content)
			}
			got, err := readStats(f, group)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
}

func readStats(f *FS, group string) (stats, error) {
	var s stats
	var errs [4]error
	s.Usage, errs[0] = f.CPUUsage(group)
	s.Throttled, errs[1] = f.CPUThrottled(group)
	s.WorkingSet, errs[2] = f.MemoryWorkingSet(group)
	s.Quota, errs[3] = f.CPUQuota(group)
	return s, errors.Join(errs[:]...)
}

func TestGroupStatsErrors(t *testing.T) {
	f := newFakeNode(t, V2, Cgroupfs)
	addGroup(t, f, "gone", -1)
	writeFakeFile(t, filepath.Join(f.path(cpuCtl, "gone"), "cpu.stat"), "user_usec 1\n")
	writeFakeFile(t, filepath.Join(f.path(cpuCtl, "gone"), "cpu.max"), "lots\n")
	cases := map[string]struct {
		read    func() error
		wantErr string
	}{
		"missing group": {func() error { _, err := f.CPUUsage("nope"); return err }, "the cgroup is gone"},
		"missing key":   {func() error { _, err := f.CPUUsage("gone"); return err }, `no "usage_usec" line`},
		"bad cpu.max":   {func() error { _, err := f.CPUQuota("gone"); return err }, `"lots" is not "<quota|max> <period>"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.read(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got %v, want an error saying %q", err, tc.wantErr)
			}
		})
	}
	if f.Exists("nope") || !f.Exists("gone") {
		t.Errorf(`Exists("nope"), Exists("gone") = %v, %v; want false, true`, f.Exists("nope"), f.Exists("gone"))
	}
}
