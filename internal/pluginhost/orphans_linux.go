package pluginhost

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// AdoptOrphans makes this process the child subreaper of its descendants,
// so that what a plugin forks into a session of its own is reparented here
// when its parent exits, and is killed by Stopped and KillOrphans. abctl
// and conformance call it first thing; a library user may.
func AdoptOrphans() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	orphans.mu.Lock()
	orphans.adopting = true
	orphans.mu.Unlock()
	return nil
}

// procStat is what the sweep reads of /proc/<pid>/stat.
type procStat struct {
	state           byte
	ppid, pgid, sid int
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// "pid (comm) state ppid pgrp session ...": comm may hold spaces and
	// parentheses, so the fields start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 || len(f[0]) != 1 {
		return procStat{}, false
	}
	var st procStat
	st.state = f[0][0]
	var e1, e2, e3 error
	st.ppid, e1 = strconv.Atoi(f[1])
	st.pgid, e2 = strconv.Atoi(f[2])
	st.sid, e3 = strconv.Atoi(f[3])
	return st, e1 == nil && e2 == nil && e3 == nil
}

// sweep kills the orphans reparented to this process (see orphans.go for
// which) and reaps them; it returns how many it killed. stopping is the
// plugin being stopped (0: none); force kills every orphan, at exit.
func sweep(stopping int, force bool) int {
	self := os.Getpid()
	sid, err := unix.Getsid(0)
	if err != nil {
		return 0
	}
	pgrp := unix.Getpgrp()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var killed []int
	orphans.mu.Lock()
	// Others running: a registered plugin besides the one stopping, or a
	// start under way. An orphan in a session of its own may be theirs.
	others := orphans.pending > 0 || len(orphans.started) > 1 ||
		len(orphans.started) == 1 && !has(orphans.started, stopping)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.ppid != self || has(orphans.started, pid) {
			continue
		}
		// A member of the stopping plugin's group, never its leader: a new
		// process that got the same pid leads a group of its own.
		member := stopping > 0 && st.pgid == stopping && pid != stopping
		escaped := st.sid != sid || st.pgid != pgrp
		if !force && !member && (!escaped || others || has(orphans.started, st.pgid)) {
			continue
		}
		if !member && st.pgid != pgrp && !has(orphans.started, st.pgid) {
			// Its whole group at once: members that are not yet
			// reparented here die too.
			_ = unix.Kill(-st.pgid, unix.SIGKILL)
		}
		_ = unix.Kill(pid, unix.SIGKILL)
		killed = append(killed, pid)
	}
	orphans.mu.Unlock()
	reap(killed)
	return len(killed)
}

func has(m map[int]int, k int) bool { return m[k] > 0 }

// reap waits for the killed orphans, which are this process's children
// now; bounded by orphanWait as a hang guard.
func reap(pids []int) {
	deadline := time.Now().Add(orphanWait)
	for _, pid := range pids {
		for {
			var ws unix.WaitStatus
			got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			if got == pid || errors.Is(err, unix.ECHILD) || err != nil && !errors.Is(err, unix.EINTR) || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// groupAlive reports whether any process (a zombie included) is left in
// the process group pgid.
func groupAlive(pgid int) bool {
	err := unix.Kill(-pgid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
