// Package clusterview is the manager's slim view of the cluster: every
// node, and every pod bound to a node and not finished, each kept as a
// summary of a few hundred bytes whatever the object's size. The
// co-location metrics and the reclaimed-capacity controller read it; only
// the leader runs it.
package clusterview
