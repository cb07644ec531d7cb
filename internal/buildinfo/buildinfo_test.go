package buildinfo

import (
	debugbi "debug/buildinfo"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/abkit/abkit", Version: "v0.0.0-20261130210000-d2a948b1c2d3+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "d2a948b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7"},
			{Key: "vcs.time", Value: "2026-11-30T21:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, c := range []struct {
		name                  string
		bi                    *debug.BuildInfo
		version, commit, date string
		want                  Info
		line                  string
	}{
		{
			name: "checkout build",
			bi:   stamped,
			want: Info{Version: "v0.0.0-20261130210000-d2a948b1c2d3+dirty", Commit: "d2a948b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7", Date: "2026-11-30T21:00:00Z", Modified: true, Go: "go1.26.8"},
			line: "v0.0.0-20261130210000-d2a948b1c2d3+dirty (commit d2a948b1c2d3, modified, 2026-11-30T21:00:00Z, go1.26.8)",
		},
		{
			name:    "release build: link-time values win",
			bi:      stamped,
			version: "v1.2.0", commit: "abcdef0123456789", date: "2026-12-01T00:00:00Z",
			want: Info{Version: "v1.2.0", Commit: "abcdef0123456789", Date: "2026-12-01T00:00:00Z", Modified: true, Go: "go1.26.8"},
			line: "v1.2.0 (commit abcdef012345, modified, 2026-12-01T00:00:00Z, go1.26.8)",
		},
		{
			name: "go run: nothing stamped",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/abkit/abkit", Version: "(devel)"}},
			want: Info{Version: "(devel)", Go: "go1.26.8"},
			line: "(devel) (commit unknown, go1.26.8)",
		},
		{
			name: "go install @commit: module mode, commit from the pseudo-version",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/abkit/abkit", Version: "v0.3.1-0.20261130210000-d2a948b1c2d3"}},
			want: Info{Version: "v0.3.1-0.20261130210000-d2a948b1c2d3", Commit: "d2a948b1c2d3", Date: "2026-11-30T21:00:00Z", Go: "go1.26.8"},
			line: "v0.3.1-0.20261130210000-d2a948b1c2d3 (commit d2a948b1c2d3, 2026-11-30T21:00:00Z, go1.26.8)",
		},
		{
			name: "go install @tag",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/abkit/abkit", Version: "v1.2.0"}},
			want: Info{Version: "v1.2.0", Go: "go1.26.8"},
			line: "v1.2.0 (commit unknown, go1.26.8)",
		},
		{
			name: "no build info",
			want: Info{Version: "(devel)", Go: "unknown"},
			line: "(devel) (commit unknown, unknown)",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := fromBuildInfo(c.bi, c.version, c.commit, c.date)
			if got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			if s := got.String(); s != c.line {
				t.Errorf("String() = %q, want %q", s, c.line)
			}
		})
	}
}

// TestBuiltBinaryNamesItsCommit builds a real binary inside this checkout,
// as make build does, and checks that what Read reports is what the Go
// toolchain stamped into it: the commit, and the module version.
func TestBuiltBinaryNamesItsCommit(t *testing.T) {
	if _, err := exec.Command("git", "rev-parse", "HEAD").Output(); err != nil {
		t.Skipf("not a git checkout (git rev-parse HEAD: %v): nothing to stamp", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "buildinfo-probe")
	// -buildvcs=auto: a machine may set GOFLAGS=-buildvcs=false in its go
	// env (this one does), as the Makefile's build overrides too.
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, "./testdata/probe")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stamped, err := debugbi.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var rev string
	for _, s := range stamped.Settings {
		if s.Key == "vcs.revision" {
			rev = s.Value
		}
	}
	if rev == "" {
		// Go stamps nothing in a git worktree (.git is a file there).
		t.Skip("go build stamped no vcs.revision here (a git worktree?); nothing to compare")
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(out))
	if want := "commit " + rev[:12]; !strings.Contains(line, want) {
		t.Errorf("probe printed %q, want it to contain %q", line, want)
	}
	if want := stamped.Main.Version + " ("; !strings.HasPrefix(line, want) {
		t.Errorf("probe printed %q, want it to start with the stamped module version %q", line, want)
	}
}
