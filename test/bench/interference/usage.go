package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's CPU times on Linux.
const userHZ = 100

// usage is where the CPU went, cumulative, at one moment.
type usage struct {
	at                time.Time
	online, offline   time.Duration // the pods' cgroups
	kubepods, busy    time.Duration // all pods; the whole node
	bench             time.Duration // this process: the load generator, the node agent
	flop              int64         // the training workload's report
	flopAt            time.Time
	trainingReporting bool
}

// cores are the CPU use between two moments, in cores. bench is part of
// system.
type cores struct{ online, offline, system, bench float64 }

func (u usage) coresSince(prev usage) cores {
	secs := u.at.Sub(prev.at).Seconds()
	if secs <= 0 {
		return cores{}
	}
	per := func(d time.Duration) float64 { return d.Seconds() / secs }
	bench := per(u.bench - prev.bench)
	return cores{
		online:  per(u.online - prev.online),
		offline: per(u.offline - prev.offline),
		// The system is all the node did outside kubepods: the load
		// generator, the node agent, whatever else runs. /proc/stat
		// samples at ticks and leaves out time stolen by the hypervisor,
		// which the cgroups' exact counters include: on a VM the
		// difference can come out below the bench's own use.
		system: max(bench, per((u.busy-prev.busy)-(u.kubepods-prev.kubepods))),
		bench:  bench,
	}
}

// flopRate is the training workload's GFLOP/s between two reports.
func (u usage) flopRate(prev usage) float64 {
	secs := u.flopAt.Sub(prev.flopAt).Seconds()
	if !u.trainingReporting || !prev.trainingReporting || secs <= 0 {
		return 0
	}
	return float64(u.flop-prev.flop) / secs / 1e9
}

// measure reads the cgroups of the online pod and of offline (nil: none),
// kubepods, the node, and train's last report (nil: none).
func (b *bench) measure(offline *pod, train *workload) (usage, error) {
	u := usage{at: time.Now()}
	var err error
	if u.online, err = b.layout.usage(b.layout.online.group()); err != nil {
		return u, err
	}
	if offline != nil {
		if u.offline, err = b.layout.usage(offline.group()); err != nil {
			return u, err
		}
	}
	if u.kubepods, err = b.layout.usage("kubepods"); err != nil {
		return u, err
	}
	if u.busy, err = nodeBusy(b.cfg.procRoot); err != nil {
		return u, err
	}
	if u.bench, err = selfCPU(b.cfg.procRoot); err != nil {
		return u, err
	}
	if train != nil {
		u.flop, u.flopAt = train.work()
		u.trainingReporting = !u.flopAt.IsZero()
	}
	return u, nil
}

// nodeBusy is the CPU time the node spent on anything but idle and
// waiting for I/O since boot, from the "cpu" line of /proc/stat.
func nodeBusy(procRoot string) (time.Duration, error) {
	f, err := os.Open(filepath.Join(procRoot, "stat"))
	if err != nil {
		return 0, fmt.Errorf("reading the node's CPU use: %w", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[0] != "cpu" {
			continue
		}
		var total, idle int64
		for i, v := range fields[1:] {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing %s/stat: %w", procRoot, err)
			}
			// guest and guest_nice (fields 9, 10) are already in user.
			if i >= 8 {
				break
			}
			total += n
			if i == 3 || i == 4 {
				idle += n
			}
		}
		return time.Duration(total-idle) * time.Second / userHZ, nil
	}
	return 0, fmt.Errorf("%s/stat has no cpu line", procRoot)
}

// loadAverage is the node's 1, 5 and 15 minute load averages.
func loadAverage(procRoot string) string {
	b, err := os.ReadFile(filepath.Join(procRoot, "loadavg"))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// selfCPU is the CPU time this process used, from its stat (utime and
// stime, fields 14 and 15, after the command in parentheses).
func selfCPU(procRoot string) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, "self", "stat"))
	if err != nil {
		return 0, fmt.Errorf("reading the bench's own CPU use: %w", err)
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("parsing %s/self/stat: too few fields", procRoot)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s/self/stat: %w", procRoot, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// quietCheck measures how busy the node is before the bench starts
// anything: what else runs takes CPU from both tiers and makes the run
// no measurement.
func quietCheck(procRoot string, cpus int) error {
	const over = 2 * time.Second
	before, err := nodeBusy(procRoot)
	if err != nil {
		return err
	}
	time.Sleep(over)
	after, err := nodeBusy(procRoot)
	if err != nil {
		return err
	}
	busy := (after - before).Seconds() / over.Seconds()
	fmt.Printf("node busy before the run: %.2f of %d cores (load average %s)\n", busy, cpus, loadAverage(procRoot))
	if busy > quietCores {
		fmt.Printf("WARNING: something else is using %.2f cores: it takes CPU from both tiers, and this run is not a valid measurement\n", busy)
	}
	return nil
}

// quietCores is the most CPU the rest of the node may use before a run
// for it to count.
const quietCores = 0.25
