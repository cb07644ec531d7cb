// Package testbin gives integration tests the binaries they run as real
// processes (the example plugins, the reference runtime, the broken
// implementations), built once per test run.
//
// `make test` builds every binary in [Packages] into one directory and
// names it in the environment variable [Env]; each test binary then fills
// its own directory with hard links into it, which costs nothing and leaves
// the shared directory untouched whatever the test does to its copy. Without
// the variable (plain `go test ./internal/x`), or when a binary is missing
// from it, the test binary builds what it needs itself, as before.
package testbin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Env names the directory of prebuilt binaries.
const Env = "ABKIT_TEST_BIN"

// Packages are the main packages `make test` prebuilds: the union of what
// every test binary asks for. The Makefile reads this list (through
// ./internal/testbin/list); it keeps no copy.
var Packages = []string{
	"./cmd/abkit-runtime",
	"./examples/plugins/...",
	"./internal/refruntime/brokenruntime",
	"./internal/refruntime/alt/...",
	"./internal/conformance/testdata/broken",
	"./internal/conformance/testdata/faults/...",
	"./internal/pluginhost/testdata/headerstamp",
	"./internal/pluginhost/testdata/bearergate",
}

// Root returns the module root, found with `go env GOMOD` so a test works
// from any package directory.
func Root(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside the abkit module")
	}
	return filepath.Dir(mod), nil
}

// Build puts into dir one executable per main package matched by pkgs
// (patterns relative to the module root, as `go build` takes them), named
// after the package directory as `go build -o dir/` names them.
func Build(ctx context.Context, dir string, pkgs ...string) error {
	root, err := Root(ctx)
	if err != nil {
		return err
	}
	if pre := os.Getenv(Env); pre != "" {
		names, err := mainNames(ctx, root, pkgs)
		if err == nil && linkAll(pre, dir, names) == nil {
			return nil
		}
		// A stale or partial prebuilt directory: build, as without it.
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

// mainNames lists the binary names `go build -o dir/` gives the main
// packages among pkgs.
func mainNames(ctx context.Context, root string, pkgs []string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(pkgs, " "), err)
	}
	var names []string
	for _, l := range strings.Fields(string(out)) {
		names = append(names, filepath.Base(l))
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no main package in %s", strings.Join(pkgs, " "))
	}
	return names, nil
}

// linkAll hard-links (or, across file systems, copies) each named binary
// from src into dst.
func linkAll(src, dst string, names []string) error {
	for _, n := range names {
		from, to := filepath.Join(src, n), filepath.Join(dst, n)
		if _, err := os.Stat(from); err != nil {
			return err
		}
		if err := os.Link(from, to); err == nil || errors.Is(err, os.ErrExist) {
			continue
		}
		if err := copyFile(from, to); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// CorpusEnv names the folder of external captures (traffic and spec
// examples written by others, with a manifest.json).
const CorpusEnv = "ABKIT_EXTERNAL_CORPUS"

// ExternalCorpus returns the folder of external captures that CorpusEnv
// names, or "" when it names none: tests that read it skip then, so a
// plain clone passes. The captures are never copied into the repository.
func ExternalCorpus(context.Context) string {
	dir := os.Getenv(CorpusEnv)
	if dir == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		return ""
	}
	return dir
}
