// Package buildinfo says which build of abctl or conformance is running:
// the module version, the commit and the build date.
//
// Release builds set all three at link time (goreleaser passes
// -ldflags "-X main.version=… -X main.commit=… -X main.date=…" and the
// mains hand them to [Read]); any other build takes them from what the Go
// toolchain stamps into the binary (runtime/debug.ReadBuildInfo): `go
// install …@v1.2.0` records the module version, and a build inside a git
// checkout records the commit, its time and whether the tree was modified.
package buildinfo

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// Info identifies a build.
type Info struct {
	// Version is the module version ("v1.2.0", a pseudo-version for an
	// untagged commit), or "(devel)" for a local build Go could not name.
	Version string `json:"version"`
	// Commit is the full VCS revision, "" when unknown (go run, a build
	// outside a checkout).
	Commit string `json:"commit,omitempty"`
	// Date is the build or commit time in RFC 3339, "" when unknown.
	Date string `json:"date,omitempty"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Go is the toolchain that built the binary.
	Go string `json:"go"`
}

// Read returns the running binary's build info. Non-empty arguments (the
// link-time values of a release build) win over the toolchain's stamps.
func Read(version, commit, date string) Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return fromBuildInfo(bi, version, commit, date)
}

func fromBuildInfo(bi *debug.BuildInfo, version, commit, date string) Info {
	info := Info{Version: version, Commit: commit, Date: date, Go: "unknown"}
	if bi != nil {
		info.Go = bi.GoVersion
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.Date == "" {
					info.Date = s.Value
				}
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	// `go install …@<commit>` builds in module mode, where Go stamps no
	// VCS settings, but the pseudo-version carries the commit and its time.
	if m := pseudo.FindStringSubmatch(info.Version); m != nil {
		if info.Commit == "" {
			info.Commit = m[2]
		}
		if t, err := time.Parse("20060102150405", m[1]); err == nil && info.Date == "" {
			info.Date = t.UTC().Format(time.RFC3339)
		}
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	return info
}

// pseudo matches the tail of a Go pseudo-version (vX.Y.Z-yyyymmddhhmmss-
// abcdefabcdef, or with "-pre.0." / ".0." before the time); a regexp
// instead of golang.org/x/mod/module, which abkit does not otherwise need.
var pseudo = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(?:\+incompatible)?(?:\+dirty)?$`)

// String is the one-line form `--version` prints after the program name:
// "v1.2.0 (commit 1a2b3c4d5e6f, 2026-11-30T12:00:00Z, go1.26.8)".
func (i Info) String() string {
	var parts []string
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if i.Modified {
			c += ", modified"
		}
		parts = append(parts, "commit "+c)
	} else {
		parts = append(parts, "commit unknown")
	}
	if i.Date != "" {
		parts = append(parts, i.Date)
	}
	parts = append(parts, i.Go)
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(parts, ", "))
}
