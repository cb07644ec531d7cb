package pluginhost

import (
	"sync"
	"time"
)

// A plugin can fork a child into a session or process group of its own
// (setsid, setpgid, a daemon's double fork): the kill of the plugin's
// process group misses it, and once its parent exits it is reparented and
// outlives every command. On Linux a host that calls AdoptOrphans becomes
// the "child subreaper" of its descendants (prctl PR_SET_CHILD_SUBREAPER):
// such orphans are reparented to the host instead of init, and the host
// kills and reaps them when the plugin that left them is stopped
// (Stopped) and when it exits (KillOrphans). Elsewhere these are no-ops
// and such an orphan survives (docs/limits.md).
//
// Telling an orphan from a plugin the host is starting must be free of
// races: a freshly forked plugin is the host's child before go-plugin
// returns its pid, and a plugin that calls setsid itself looks, in /proc,
// just like an orphan. So every start is announced first (Starting), under
// the same lock as the sweep, and ends with the child's pid registered.
// The sweep of Stopped(pid) kills what is certainly that plugin's (a member
// of its process group reparented to the host); a process in a session or
// group of its own cannot be traced back to the plugin that forked it once
// reparented, so it is killed only when no start is under way and no other
// registered plugin is running (it might be theirs): at the stop of the
// last one, at the latest by KillOrphans at exit. A registered pid is
// never killed nor waited for by the sweep: go-plugin reaps it.
var orphans = &orphanReg{started: map[int]int{}}

type orphanReg struct {
	mu       sync.Mutex
	pending  int         // starts announced whose pid is not registered yet
	started  map[int]int // children this host started (each leads its process group), counted: a pid may be reused before the old one is forgotten
	adopting bool        // AdoptOrphans succeeded
}

// Starting announces that a child process (a plugin or a runtime) is
// about to be started; call the returned function exactly once, with its
// pid as soon as it is known, or with 0 if none was started.
func Starting() (started func(pid int)) {
	orphans.mu.Lock()
	orphans.pending++
	orphans.mu.Unlock()
	var once sync.Once
	return func(pid int) {
		once.Do(func() {
			orphans.mu.Lock()
			orphans.pending--
			if pid > 0 {
				orphans.started[pid]++
			}
			orphans.mu.Unlock()
		})
	}
}

// Stopped is called once a child registered through Starting has been
// reaped: it kills and reaps what that child left behind reparented to
// this host (members of its process group, processes in sessions or groups
// of their own), then forgets pid. The wait for the child's group to be
// gone is bounded (orphanWait) as a hang guard.
func Stopped(pid int) {
	orphans.mu.Lock()
	known := orphans.started[pid] > 0
	orphans.mu.Unlock()
	if !known {
		return
	}
	if adopting() {
		deadline := time.Now().Add(orphanWait)
		for {
			n := sweep(pid, false)
			if n == 0 && !groupAlive(pid) || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	orphans.mu.Lock()
	if orphans.started[pid]--; orphans.started[pid] <= 0 {
		delete(orphans.started, pid)
	}
	orphans.mu.Unlock()
}

// KillOrphans kills and reaps every orphan reparented to this host, also
// while starts are under way: the host is exiting. It returns once none is
// left and no registered plugin group is alive, or after orphanWait.
func KillOrphans() {
	if !adopting() {
		return
	}
	deadline := time.Now().Add(orphanWait)
	for {
		n := sweep(0, true)
		if n == 0 && !anyGroupAlive() || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// orphanWait bounds one Stopped or KillOrphans: a hang guard against a
// process that does not die of SIGKILL (uninterruptible sleep).
const orphanWait = 2 * time.Second

func adopting() bool {
	orphans.mu.Lock()
	defer orphans.mu.Unlock()
	return orphans.adopting
}

func anyGroupAlive() bool {
	orphans.mu.Lock()
	pids := make([]int, 0, len(orphans.started))
	for p := range orphans.started {
		pids = append(pids, p)
	}
	orphans.mu.Unlock()
	for _, p := range pids {
		if groupAlive(p) {
			return true
		}
	}
	return false
}
