package runtimesuite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/conformance/runtimesuite"
)

// A wrapper script given as --runtime that is not a runtime and has
// started a child of its own fails within the start timeout, and the child
// is gone too (the child holds the runtime's stdout and stderr open, which
// go-plugin reads to EOF before it reaps).
func TestLaunchNotARuntimeWithChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := dir + "/child.pid"
	script := dir + "/wrapper.sh"
	body := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + "\necho not a handshake\nwait\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := runtimesuite.Launcher{Path: script, StartTimeout: 2 * time.Second}.Launch(context.Background())
	// Blocking on the child would take its 300 s sleep; a minute tells
	// the two apart on any machine.
	if took := time.Since(t0); took > time.Minute {
		t.Errorf("Launch took %v with a 2s start timeout: it waited for the child", took)
	}
	if err == nil || !strings.Contains(err.Error(), "is not a working abkit runtime") {
		t.Fatalf("err %v: want a not-a-runtime error", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the wrapper did not start its child: %v", err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	for !goneOrZombie(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !goneOrZombie(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the wrapper's child %d was left behind", pid)
	}
}

// goneOrZombie reports a process that no longer runs; a killed process
// whose parent is not this test stays a zombie until init reaps it.
func goneOrZombie(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
