package polyglot

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/abkit/abkit/internal/testbin"
)

// typescriptSDK skips t unless node is installed and sdk/typescript is
// built (`npm ci && npm run build` there; .ci/run does it).
func typescriptSDK(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: install nodejs and npm (Debian); .ci/run installs them and builds sdk/typescript")
	}
	if _, err := os.Stat(filepath.Join(repoRoot(t), "sdk", "typescript", "dist", "index.js")); err != nil {
		t.Skip("sdk/typescript is not built: run `npm ci && npm run build` in sdk/typescript (.ci/run does)")
	}
}

// TestTypeScriptExamplesPassConformance runs the plugin suite on every
// example of the TypeScript SDK and fails on any counted failure.
func TestTypeScriptExamplesPassConformance(t *testing.T) {
	typescriptSDK(t)
	runExamples(t, "typescript", ".js")
}

// TestTypeScriptTypesCurrent regenerates sdk/typescript/src/gen (the types
// and the JSON descriptor) the way `make proto-typescript` does and
// compares it with the committed files.
func TestTypeScriptTypesCurrent(t *testing.T) {
	root := repoRoot(t)
	gen := filepath.Join(root, "sdk", "typescript", "node_modules", ".bin", "proto-loader-gen-types")
	if _, err := os.Stat(gen); err != nil {
		t.Skip("proto-loader-gen-types not installed: run npm ci in sdk/typescript (.ci/run does)")
	}
	out := t.TempDir()
	cmd := exec.Command(gen, "--keepCase", "--longs=String", "--enums=String", "--defaults", "--grpcLib=@grpc/grpc-js",
		"-I", "../../proto", "--outDir="+out, "abkit/v1/abkit.proto")
	cmd.Dir = filepath.Join(root, "sdk", "typescript")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("proto-loader-gen-types: %v\n%s", err, b)
	}
	cmd = exec.Command("node", "scripts/proto-json.js", "../../proto/abkit/v1/abkit.proto", filepath.Join(out, "abkit.json"))
	cmd.Dir = filepath.Join(root, "sdk", "typescript")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/proto-json.js: %v\n%s", err, b)
	}
	committed := filepath.Join(root, "sdk", "typescript", "src", "gen")
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(committed, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("sdk/typescript/src/gen/%s differs from what proto/abkit/v1/abkit.proto generates: run make proto-typescript and commit", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTypeScriptSDKUnit runs the SDK's own tests (sdk/typescript/test) with
// a conformance binary for runConformance, so none of them skips.
func TestTypeScriptSDKUnit(t *testing.T) {
	typescriptSDK(t)
	bin := t.TempDir()
	if err := testbin.Build(context.Background(), bin, "./cmd/conformance"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "--test", filepath.Join("test", "sdk.test.js"))
	cmd.Env = append(os.Environ(), "ABKIT_CONFORMANCE="+filepath.Join(bin, "conformance"))
	cmd.Dir = filepath.Join(repoRoot(t), "sdk", "typescript")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test (sdk/typescript): %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("# skipped 0")) {
		t.Errorf("a TypeScript SDK test skipped:\n%s", out)
	}
}
