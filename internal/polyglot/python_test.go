// Package polyglot checks abkit's plugin SDKs for languages other than Go
// (sdk/python) against the conformance suite, through the same process
// boundary as a Go plugin.
package polyglot

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abkit/abkit/internal/catalog"
	abctl "github.com/abkit/abkit/internal/cli"
	"github.com/abkit/abkit/internal/conformance/cli"
	"github.com/abkit/abkit/internal/testbin"
)

// pythonWithGRPC returns a python3 that imports grpc and protobuf, or skips
// t saying what to install. The first python3 on PATH may be another one
// (pyenv, a virtualenv), so Debian's is tried too.
func pythonWithGRPC(t *testing.T) string {
	t.Helper()
	var tried []string
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append([]string{p}, cands...)
	}
	for _, p := range cands {
		if err := exec.Command(p, "-c", "import grpc, google.protobuf").Run(); err == nil {
			return p
		}
		tried = append(tried, p)
	}
	t.Skipf("no python3 that imports grpc and google.protobuf (tried %s): install python3-grpcio and python3-protobuf (Debian) or pip install grpcio protobuf; .ci/run installs them",
		strings.Join(tried, ", "))
	return ""
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// usePython puts python first on PATH as python3, so the examples'
// "#!/usr/bin/env python3" launchers run it.
func usePython(t *testing.T, python string) {
	dir := t.TempDir()
	if err := os.Symlink(python, filepath.Join(dir, "python3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestPythonExamplesPassConformance runs the plugin suite on every Python
// example, as `conformance run --plugin examples/python/X/X.py` does, and
// fails on any counted failure (a failure, a stale expected failure).
func TestPythonExamplesPassConformance(t *testing.T) {
	usePython(t, pythonWithGRPC(t))
	runExamples(t, "python", ".py")
}

// TestPythonSDKUnit runs the SDK's own Python tests (sdk/python/tests),
// with a conformance binary for abkit.conformancetest (built here, or taken
// from ABKIT_TEST_BIN), so none of them skips.
func TestPythonSDKUnit(t *testing.T) {
	python := pythonWithGRPC(t)
	bin := t.TempDir()
	if err := testbin.Build(context.Background(), bin, "./cmd/conformance"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
	cmd.Env = append(os.Environ(), "ABKIT_CONFORMANCE="+filepath.Join(bin, "conformance"))
	cmd.Dir = filepath.Join(repoRoot(t), "sdk", "python")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python -m unittest (sdk/python): %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("skipped")) {
		t.Errorf("a Python test skipped:\n%s", out)
	}
}

// TestPythonStubsCurrent regenerates sdk/python/abkit/v1 the way `make
// proto-python` does and compares it with the committed files. It skips
// when protoc or grpc_python_plugin is missing (.ci/run installs them).
func TestPythonStubsCurrent(t *testing.T) {
	protoc, err1 := exec.LookPath("protoc")
	plugin, err2 := exec.LookPath("grpc_python_plugin")
	if err1 != nil || err2 != nil {
		t.Skip("protoc or grpc_python_plugin not found: install protobuf-compiler and protobuf-compiler-grpc (Debian); .ci/run installs them")
	}
	root := repoRoot(t)
	out := t.TempDir()
	cmd := exec.Command(protoc, "-I", "proto", "--plugin=protoc-gen-grpc_python="+plugin,
		"--python_out="+out, "--grpc_python_out="+out, "proto/abkit/v1/abkit.proto")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	for _, f := range []string{"abkit_pb2.py", "abkit_pb2_grpc.py"} {
		want, err := os.ReadFile(filepath.Join(out, "abkit", "v1", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, "sdk", "python", "abkit", "v1", f))
		if err != nil {
			t.Fatalf("committed stub: %v (run make proto-python)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("sdk/python/abkit/v1/%s differs from what proto/abkit/v1/abkit.proto generates: run make proto-python and commit", f)
		}
	}
}

// TestPythonPluginAsCommandLine gives a Python plugin as a command line
// (`conformance run --plugin python3 --plugin-arg FILE`): the interpreter
// found in PATH, the script as its argument, no shebang needed.
func TestPythonPluginAsCommandLine(t *testing.T) {
	usePython(t, pythonWithGRPC(t))
	var out, errb bytes.Buffer
	root := cli.NewRoot(&cli.App{Out: &out, Err: &errb})
	script := filepath.Join(repoRoot(t), "examples", "python", "submittagger", "submittagger.py")
	root.SetArgs([]string{"run", "--plugin", "python3", "--plugin-arg", script, "--isolation", "suite"})
	root.SetOut(&out)
	root.SetErr(&errb)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("conformance run --plugin python3 --plugin-arg %s: %v\n%s%s", script, err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "python3 "+script) || !strings.Contains(out.String(), "0 failed") {
		t.Errorf("report does not name the command line or has failures:\n%s", out.String())
	}
}

// TestPythonExamplesInDirCatalog lists the Python examples through a dir:
// catalog source, with abctl's describer, as `abctl catalog list --source
// dir:DIR` does.
func TestPythonExamplesInDirCatalog(t *testing.T) {
	usePython(t, pythonWithGRPC(t))
	dir := t.TempDir()
	for _, e := range []string{"guardrail", "toolpolicy", "submittagger"} {
		if err := os.Symlink(filepath.Join(repoRoot(t), "examples", "python", e, e+".py"), filepath.Join(dir, e+".py")); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := catalog.Load(ctx, []string{"dir:" + dir}, catalog.Options{Describer: abctl.NewDescriber(), CacheDir: "-"})
	if err != nil {
		t.Fatalf("dir:%s: %v", dir, err)
	}
	for _, name := range []string{"py-guardrail", "py-tool-policy", "py-submit-tagger"} {
		if _, ok := cat.Lookup(name); !ok {
			t.Errorf("dir: catalog lacks %s; it has %v", name, cat.Names())
		}
	}
}
