package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// printAgentsSection prints the two agent phases side by side, the
// apiserver's requests a second in each, and the agents' share of
// kube-apiserver's CPU.
func printAgentsSection(out io.Writer, r *reclaimResult) {
	a := r.agents
	if a == nil {
		return
	}
	fmt.Fprintf(out, "\nnode agents:  %d simulated (nodeagent.Cluster each: an informer on its node's pods, own clients and connections), in the harness's process;\n", a.agents)
	fmt.Fprintf(out, "              evictions at %.2f per node per hour: %d done, %d failed, %d ticks found no running TFJob pod on any agent's node\n",
		a.evictionsPerHour, a.evictions, a.failed, a.noCandidate)
	fmt.Fprintf(out, "              start: all listed their nodes' pods in %s; kube-apiserver %.1f CPU-s, etcd %.1f CPU-s, the harness %.1f CPU-s meanwhile\n",
		a.synced.Round(time.Millisecond), a.startUp.plane["kube-apiserver"], a.startUp.plane["etcd"], a.startUp.harnessCPU)
	fmt.Fprintf(out, "              then %s until two reclaim syncs had ended (a sync the start slowed and the writes it held back are not in the phase)\n", a.settled.Round(time.Second))
	fmt.Fprintf(out, "              the harness's RSS before / with the agents: %.0f MiB / %.0f MiB (%.0f KiB an agent)\n",
		float64(a.harnessRSSBefore)/mib, float64(a.harnessRSS)/mib, float64(a.harnessRSS-a.harnessRSSBefore)/1024/float64(max(a.agents, 1)))
	fmt.Fprintf(out, "              Running TFJobs at the first phase's start / at the end: %d / %d\n", a.runningJobsAtStart, a.runningJobsAtEnd)

	fmt.Fprintln(out)
	w, flush := newTable(out, 0)
	phases := []agentPhase{a.alone, a.with, a.after}
	row := func(what string, value func(p agentPhase) string) {
		cells := []string{what}
		for _, p := range phases {
			cells = append(cells, value(p))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	per := func(v float64, p agentPhase) float64 { return v / p.run.elapsed.Seconds() }
	row("", func(p agentPhase) string { return p.name })
	row("length", func(p agentPhase) string { return secs(p.run.elapsed) })
	row("kube-apiserver CPU-s a second", func(p agentPhase) string { return fmt.Sprintf("%.3f", cpuPerSecond(p.run, "kube-apiserver")) })
	row("etcd CPU-s a second", func(p agentPhase) string { return fmt.Sprintf("%.3f", cpuPerSecond(p.run, "etcd")) })
	row("manager CPU-s a second", func(p agentPhase) string { return fmt.Sprintf("%.3f", per(p.run.cpu, p)) })
	row("harness CPU-s a second (the agents run in it)", func(p agentPhase) string { return fmt.Sprintf("%.3f", per(p.run.harnessCPU, p)) })
	row("machine busy (of the cores)", func(p agentPhase) string {
		return fmt.Sprintf("%.0f of %.0f s", p.run.machineCPU, float64(runtime.NumCPU())*p.run.elapsed.Seconds())
	})
	row("harness reads of the manager's /metrics", func(p agentPhase) string { return fmt.Sprintf("%d", p.scrapes) })
	row("manager RSS at the end", func(p agentPhase) string { return fmt.Sprintf("%.0f MiB", float64(p.rss)/mib) })
	row("kube-apiserver RSS at the end", func(p agentPhase) string { return fmt.Sprintf("%.0f MiB", float64(p.apiRSS)/mib) })
	row("reclaim syncs", func(p agentPhase) string { return fmt.Sprintf("%.0f", p.syncs) })
	row("sync time mean / p50 / p99 / max", func(p agentPhase) string { return syncTimes(p.records) })
	row("node writes / per node per sync", func(p agentPhase) string {
		return fmt.Sprintf("%.0f / %s", p.writes, ratio(p.writes, p.syncs*float64(r.nodes), "%.3f"))
	})
	row("Prometheus queries / per sync", func(p agentPhase) string {
		return fmt.Sprintf("%d / %s", p.queries, ratio(float64(p.queries), p.syncs, "%.1f"))
	})
	row("pod watches open at the end (apiserver)", func(p agentPhase) string { return fmt.Sprintf("%.0f", p.watches) })
	row("apiserver requests a second, all", func(p agentPhase) string { return fmt.Sprintf("%.1f", per(p.run.apiserver.sum(all), p)) })
	row("  the manager's (its rest_client count)", func(p agentPhase) string {
		total := 0.0
		for _, v := range p.run.client {
			total += v
		}
		return fmt.Sprintf("%.2f (%s)", per(total, p), methodRates(p.run.client, p.run.elapsed))
	})
	row("  the agents'", func(p agentPhase) string { return fmt.Sprintf("%.2f", per(p.agents.sum(all), p)) })
	row("  the harness's", func(p agentPhase) string { return fmt.Sprintf("%.2f", per(p.run.harness.sum(all), p)) })
	flush()
	fmt.Fprintf(out, "agents' share of kube-apiserver's CPU, (with − alone) / with, alone the mean of the phases around: (%.3f − %.3f) / %.3f = %.1f %%\n",
		cpuPerSecond(a.with.run, "kube-apiserver"), a.aloneCPU(), cpuPerSecond(a.with.run, "kube-apiserver"), 100*a.apiserverShare())
	perRequest, agentsCPU, share := a.normalisedShare()
	fmt.Fprintf(out, "the same, everyone else's requests held equal: %.2f ms of kube-apiserver CPU a request without the agents; with them %.3f CPU-s a second above that: %.1f %%\n",
		1000*perRequest, agentsCPU, 100*share)
	fmt.Fprintln(out, "(kwok's requests are in \"all\": node Leases, heartbeats in nodes/status, pods/status; watches count when they end)")

	fmt.Fprintln(out, "\napiserver requests a second by resource and verb (apiserver_request_total; agents = of them, the agents')")
	w, flush = newTable(out, tabwriter.AlignRight)
	fmt.Fprintf(w, "resource\tverb\t%s\t%s\tagents\t%s\t\n", a.alone.name, a.with.name, a.after.name)
	type key struct{ verb, resource string }
	rates := map[key][4]float64{}
	for i, p := range phases {
		for _, vr := range p.run.apiserver.byVerbAndResource() {
			k := key{vr.verb, vr.resource}
			v := rates[k]
			v[[]int{0, 1, 3}[i]] = per(vr.ok+vr.failed, p)
			rates[k] = v
		}
	}
	for _, vr := range a.with.agents.byVerbAndResource() {
		k := key{vr.verb, vr.resource}
		v := rates[k]
		v[2] = per(vr.ok+vr.failed, a.with)
		rates[k] = v
	}
	keys := make([]key, 0, len(rates))
	for k := range rates {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y key) int {
		return strings.Compare(x.resource+" "+x.verb, y.resource+" "+y.verb)
	})
	for _, k := range keys {
		v := rates[k]
		fmt.Fprintf(w, "%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t\n", k.resource, k.verb, v[0], v[1], v[2], v[3])
	}
	flush()
}

func all(requestKey) bool { return true }

// methodRates are a client's requests a second by method.
func methodRates(byMethod map[string]float64, d time.Duration) string {
	var parts []string
	for m, v := range byMethod {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", m, v/d.Seconds()))
		}
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
