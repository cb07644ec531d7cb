package examplerun_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/conformance/cli"
)

// outsideCopies are the examples the outside module copies: the package
// directory under examples/plugins and the package name there.
var outsideCopies = []string{"inferenceparser", "guardrail"}

// outsideRuntime is the example runtime and its adapter the outside module
// copies: directory in the checkout, directory in the module.
var outsideRuntime = [][2]string{
	{"examples/runtimes/minipipe", "minipipe"},
	{"examples/runtimes/minipipe/cmd/minipipe-runtime", "cmd/minipipe-runtime"},
}

// TestOutsideModuleBuildsExamples is the check that an author outside this
// module can build on the SDK: testdata/outside is a module of its own
// (example.com/outside, with a replace to this checkout) that builds copies
// of the inference-parser and guardrail examples, tests included, and of
// the minipipe runtime with its adapter on sdk/runtimekit; the built
// binaries pass `conformance run --plugin` and `--runtime`.
//
// The module is copied to a temporary directory and the examples' current
// sources (and the files they embed) into it, so the copies never drift
// and nothing is written into the tree; guardrail's import of
// inferenceparser is pointed at the copy. The module's go.sum is the main
// module's: every module the copy needs is one the main module needs, so
// the build works from the module cache alone.
func TestOutsideModuleBuildsExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the outside-module build (two binaries)")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH: cannot build the outside module")
	}
	ctx := context.Background()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := filepath.Abs(filepath.Join("testdata", "outside"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// The module is copied out of the tree with its replace pointed back
	// at this checkout, then the examples' current sources (and what they
	// embed, such as a parser's schema.json) are copied into it.
	work := filepath.Join(tmp, "outside")
	if err := os.CopyFS(work, os.DirFS(mod)); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(work, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gomod = bytes.ReplaceAll(gomod, []byte("=> ../../../.."), []byte("=> "+root))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), gomod, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	copySources(t, root, work)
	mod = work

	gocmd := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, gobin, args...)
		cmd.Dir = mod
		// The module cache only: never the network, never a go.sum edit.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), mod, err, out)
		}
	}
	bin := filepath.Join(tmp, "bin")
	gocmd("build", "-o", bin+string(filepath.Separator), "./cmd/...")
	// vet compiles the copies' tests too: they must build outside as well.
	gocmd("vet", "./...")

	for _, name := range []string{"inference-parser", "guardrail"} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := cli.Main(ctx, &cli.App{Out: &out, Err: &errb}, []string{"run", "--plugin", filepath.Join(bin, name)})
			if code != 0 {
				t.Fatalf("conformance run --plugin %s: exit %d\n%s\n%s", name, code, out.String(), errb.String())
			}
			t.Logf("conformance run --plugin %s: %s", name, lastLine(out.String()))
		})
	}
	t.Run("minipipe-runtime", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := cli.Main(ctx, &cli.App{Out: &out, Err: &errb}, []string{"run", "--runtime", filepath.Join(bin, "minipipe-runtime")})
		if code != 0 {
			t.Fatalf("conformance run --runtime minipipe-runtime: exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		t.Logf("conformance run --runtime minipipe-runtime: %s", lastLine(out.String()))
	})
}

// copySources copies the examples' current sources, what they embed and
// their testdata from the checkout at root into the module at work, each
// copy importing the other copies instead of the checkout's examples.
func copySources(t *testing.T, root, work string) {
	t.Helper()
	copies := outsideRuntime
	for _, pkg := range outsideCopies {
		copies = append(copies, [2]string{"examples/plugins/" + pkg, pkg})
	}
	for _, cp := range copies {
		src, pkg := filepath.Join(root, filepath.FromSlash(cp[0])), filepath.FromSlash(cp[1])
		ents, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ents {
			if e.Name() == "testdata" && e.IsDir() {
				if err := os.CopyFS(filepath.Join(work, pkg, "testdata"), os.DirFS(filepath.Join(src, "testdata"))); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if !e.Type().IsRegular() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(e.Name(), ".go") {
				n++
				// The copy imports the other copy, not the checkout's example.
				for _, other := range outsideCopies {
					b = bytes.ReplaceAll(b, []byte(`"github.com/abkit/abkit/examples/plugins/`+other+`"`), []byte(`"example.com/outside/`+other+`"`))
				}
				b = bytes.ReplaceAll(b, []byte(`"github.com/abkit/abkit/examples/runtimes/minipipe"`), []byte(`"example.com/outside/minipipe"`))
			}
			dst := filepath.Join(work, pkg, e.Name())
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if n == 0 {
			t.Fatalf("no sources in %s", src)
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
