package pluginhost

import "sync"

// Groups tracks the process groups of the plugins a program has running,
// so that it can kill them all at once: on a second SIGINT or SIGTERM,
// which must end the program now, without the graceful Close of each
// plugin. Set Options.Groups to have Load add each plugin and Close remove
// it. A nil *Groups tracks nothing.
type Groups struct {
	mu   sync.Mutex
	pids map[int]struct{}
}

// NewGroups returns an empty set.
func NewGroups() *Groups { return &Groups{pids: map[int]struct{}{}} }

// Add tracks the process group led by pid.
func (g *Groups) Add(pid int) {
	if g == nil || pid <= 0 {
		return
	}
	g.mu.Lock()
	g.pids[pid] = struct{}{}
	g.mu.Unlock()
}

// Remove stops tracking the group led by pid.
func (g *Groups) Remove(pid int) {
	if g == nil {
		return
	}
	g.mu.Lock()
	delete(g.pids, pid)
	g.mu.Unlock()
}

// Len is the number of groups tracked.
func (g *Groups) Len() int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pids)
}

// KillAll sends SIGKILL to every tracked process group, then kills the
// orphans reparented to this process (KillOrphans): what the plugins
// forked into sessions of their own.
func (g *Groups) KillAll() {
	if g == nil {
		return
	}
	g.mu.Lock()
	for pid := range g.pids {
		killGroup(pid)
	}
	g.mu.Unlock()
	KillOrphans()
}
