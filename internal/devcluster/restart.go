package devcluster

import (
	"fmt"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// Restarts of a component that exits, under Options.RestartComponents: the
// first after restartDelay, at most maxRestarts within restartWindow. More
// is a crash loop, which stops the cluster as an exit always does without
// the option.
const (
	restartDelay  = time.Second
	maxRestarts   = 5
	restartWindow = time.Minute
)

// keepRunning starts p again, with the same arguments and data, each time
// it exits while the cluster runs, and returns the last process once it
// will not be restarted: the cluster is stopping, or it crash-loops.
func (c *Cluster) keepRunning(p *process.Process) *process.Process {
	var recent []time.Time
	for {
		<-p.Done()
		now := time.Now()
		recent = append(recent, now)
		for len(recent) > 0 && now.Sub(recent[0]) > restartWindow {
			recent = recent[1:]
		}
		if len(recent) > maxRestarts {
			fmt.Fprintf(c.out, "%s exited %d times within %v: not restarting it\n", p.Name(), len(recent), restartWindow)
			return p
		}
		time.Sleep(restartDelay)
		next, err := c.restart(p)
		if err != nil {
			fmt.Fprintf(c.out, "Restarting %s: %v\n", p.Name(), err)
			return p
		}
		if next == nil {
			return p
		}
		p = next
	}
}

// restart starts an exited child again in its place, records its new PID
// in the state file, and returns it; nil when the cluster is stopping.
func (c *Cluster) restart(old *process.Process) (*process.Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return nil, nil
	}
	name := old.Name()
	command := c.commands[name]
	p, err := process.StartNamed(name, command[0], command[1:], c.envs[name], old.LogPath())
	if err != nil {
		return nil, err
	}
	for i := range c.procs {
		if c.procs[i] == old {
			c.procs[i] = p
		}
	}
	for i := range c.state.Components {
		if c.state.Components[i].Name == name {
			c.state.Components[i].PID = p.PID()
		}
	}
	fmt.Fprintf(c.out, "%s exited (%v); started it again as pid %d\n", name, old.Wait(), p.PID())
	return p, c.state.write(c.opts.StateDir)
}
