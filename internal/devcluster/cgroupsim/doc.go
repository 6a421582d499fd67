// Package cgroupsim is a SIMULATOR of the cgroups of the local cluster's
// nodes, for `backfill dev`, whose nodes are kwok fakes with no kernel: it
// lets the real node agent (internal/nodeagent) run on each of them.
//
// For every simulated node it keeps a directory laid out as cgroup v2 with
// the kubelet's systemd driver makes it (cgroup/kubepods.slice, the QoS
// slices, one slice per running pod with cpu.max, cpu.idle, cpu.weight,
// cpu.stat and cpu.pressure) beside a /proc holding stat, and it runs
// nodeagent.Agent there, with a nodefs.FS rooted in that directory and the
// node's pods from the apiserver (nodeagent.Cluster), exactly as the
// DaemonSet's agent runs on a real node; only memory evictions are off.
//
// The simulated kernel moves the counters the agent reads from what the
// rest of the local cluster says each pod uses (the kwok usage annotations
// of the online day and of the training simulation), just before each of
// the agent's ticks reads them:
//
//   - pods that are not on reclaimed capacity, online ones and training on
//     requests alike, and the node's own daemons use what they ask for,
//     each capped by its cpu.max;
//   - pods on reclaimed capacity share what is left, each capped by its
//     cpu.max, which is the agent's ceiling when it sets one: the time
//     they asked for beyond it is counted as throttled;
//   - every pod's threads wait for a CPU (cpu.pressure "some") as the
//     node fills (Wait): hardly at all below three quarters of the node,
//     steeply above. The use of pods in the idle class (cpu.idle 1)
//     counts a quarter toward that load, as online threads preempt them.
//
// So the agent's ceiling follows the online day, its cap shows as
// throttled training, and its metrics, served per node by Agents.Handler,
// are what a node agent of a real cluster reports. The kwok usage
// annotations are left as they are: the kubelet metrics of the local
// cluster, and the latency simulation that reads them, show what training
// asks for, not what its cap lets it use.
package cgroupsim
