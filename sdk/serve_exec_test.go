package sdk_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// serveHelperEnv makes the test binary, re-executed, call sdk.Serve on the
// bundle it names instead of running tests.
const serveHelperEnv = "ABKIT_SDK_TEST_SERVE"

func init() {
	// Runs before the tests, so that a re-executed test binary serves.
	switch os.Getenv(serveHelperEnv) {
	case "":
		return
	case "long-description":
		sdk.Serve(sdk.Plugin{Name: "long", Description: strings.Repeat("Too long. ", 9),
			Pipeline: &gateway.Factory{Name: "long", New: func(json.RawMessage) (gateway.Plugin, error) { return finisher{}, nil }}})
	case "unservable":
		sdk.Serve(sdk.Plugin{Name: "bad", Description: "Fine description",
			Pipeline: &gateway.Factory{Name: "other"}})
	}
	os.Exit(99) // Serve does not return
}

func serveHelper(t *testing.T, mode string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveHelperEnv+"="+mode, sdk.MagicCookieKey+"="+sdk.MagicCookieValue)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	return cmd, &stderr
}

// TestServeWarnsAndServesBadDescription_P5: Serve writes a warning naming
// P5 and the fix to stderr, then serves (the go-plugin handshake line
// appears on stdout), so that hosts can judge the description.
func TestServeWarnsAndServesBadDescription_P5(t *testing.T) {
	cmd, stderr := serveHelper(t, "long-description")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		// go-plugin's handshake: core version|app version|network|addr|protocol.
		if !strings.HasPrefix(l, "1|1|") || !strings.Contains(l, "|grpc") {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("stdout %q, want the go-plugin handshake line; stderr:\n%s", l, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no handshake line within 10s")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for _, want := range []string{"warning", "P5", "90 characters", "shorten it to at most 80", "Plugin.Description"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q: want it to contain %q", stderr.String(), want)
		}
	}
}

// TestServeRefusesUnservable: a plugin that cannot be served at all makes
// Serve exit with status 2 and say why on stderr.
func TestServeRefusesUnservable(t *testing.T) {
	cmd, stderr := serveHelper(t, "unservable")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{`"bad" cannot be served`, "make them equal", "Pipeline.New is nil"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q: want it to contain %q", stderr.String(), want)
		}
	}
}
