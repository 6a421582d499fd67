package main

import (
	"fmt"
	"strings"

	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// Keys of the references: online alone at a level, steady and in a
// burst, which every other condition of the round is divided by.
const (
	keyAlone      = "alone"
	keyBurstAlone = "burst-alone"
	// keyOfflineAlone is the training workload with no online load, once
	// a round: the denominator of its speed.
	keyOfflineAlone = "offline-alone"
	keyCores        = "cores"
)

// condition is one thing measured once in every round at a level.
type condition struct {
	key, name  string
	protection string // calibration.Protection*
	burst      bool
	offline    bool
	// agent are the node agent's settings, nil for none.
	agent *nodeagent.Settings
	// cores: offline on cores of its own, the online pod on the others;
	// the load generator, as the node's daemons, on any.
	cores bool
}

// reference is the condition a condition's ratios divide by.
func (c condition) reference() string {
	if c.burst {
		return keyBurstAlone
	}
	return keyAlone
}

// variant is an agent condition of the sweep: the agent's settings with
// some flags changed.
type variant struct {
	label    string
	settings nodeagent.Settings
}

// conditions are what every round measures at a level: online alone
// twice (the second is the A/A pair, the noise floor), beside BestEffort
// training, beside it under the node agent (and each sweep variant), on
// cores of its own where the level leaves a core idle; then the same but
// the sweep and the core split in a burst when bursts are on.
func (b *bench) conditions(lvl *level) []condition {
	agent := b.cfg.agent
	steady := []condition{
		{key: keyAlone, name: "online alone", protection: calibration.ProtectionNone},
		{key: calibration.KeyAloneAgain, name: "online alone again (A/A)", protection: calibration.ProtectionNone},
		{key: calibration.KeyBestEffort, name: "offline BestEffort", protection: calibration.ProtectionWeights, offline: true},
		{key: calibration.KeyAgent, name: "offline BestEffort, node agent", protection: calibration.ProtectionAgent, offline: true, agent: &agent},
	}
	for i := range b.cfg.sweep {
		v := &b.cfg.sweep[i]
		steady = append(steady, condition{key: "agent " + v.label, name: "node agent, " + v.label,
			protection: calibration.ProtectionAgent, offline: true, agent: &v.settings})
	}
	if b.cfg.cores && lvl.offlineCores > 0 {
		steady = append(steady, condition{key: keyCores, name: fmt.Sprintf("offline BestEffort on %d core(s) of its own", lvl.offlineCores),
			protection: calibration.ProtectionCores, offline: true, cores: true})
	}
	if !b.cfg.bursts || !lvl.bursts() {
		return steady
	}
	all := steady
	for _, c := range steady {
		if strings.HasPrefix(c.key, "agent ") || c.cores {
			continue // the sweep and the core split are of steady load
		}
		c.burst = true
		c.key = "burst-" + c.key
		c.name = "burst: " + c.name
		all = append(all, c)
	}
	return all
}
