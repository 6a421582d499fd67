// Package nodeagent is `backfill node-agent`, the DaemonSet that protects
// online pods on its node within a second, where the manager's central
// eviction takes minutes:
//
//   - every tick it measures, from the node's own cgroups and /proc, what
//     online pods and the system use, and caps the offline pods' CPU at
//     what they leave below a threshold of the node (CPU suppression): the
//     ceiling shrinks at once and grows gradually;
//   - above a memory watermark it evicts offline pods through the Eviction
//     API, least work lost first, with the manager's own ranking;
//   - it exports what it measured and set, and per online pod its CPU
//     wait, the time during which at least one of its threads waited for
//     a CPU (pressure stall information's "some"; nodefs.WaitMeter says
//     how each cgroup layout gives it): the interference signal.
//
// It caps only offline pods' cgroups, never an online pod's nor a QoS
// class's (online pods without requests share the best-effort class with
// offline pods, and offline pods with limits live in the burstable one).
// It reconciles what is on the node, not what it remembers: every tick,
// a pod that is not reclaimed gets back the kubelet's quota where its
// cgroup holds less, and leaves the idle class, whoever set them (an
// agent that died, its time on reclaimed capacity). On a clean exit it
// lifts the ceiling and idle class of every reclaimed pod; if it dies,
// the last ceilings stay until the next agent starts: training slows,
// online pods stay safe.
package nodeagent
