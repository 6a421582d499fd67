// Package colocation holds backfill's co-location policy: how offline
// training pods are told apart from online pods, how a disruption
// (preemption, eviction, node loss) is recognised, and the priority they get.
package colocation
