package plugins_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/abkit/abkit"

// allowedImport reports whether an example may import path: the standard
// library and third-party modules, the public SDK, and other examples (one
// example may build on another, as guardrail reads the parsers'
// extensions). Anything else under the module (internal/..., cmd/...) is
// code an author outside this module cannot import, so an example that
// uses it cannot be copied.
func allowedImport(path string) bool {
	if path != module && !strings.HasPrefix(path, module+"/") {
		return true
	}
	for _, ok := range []string{module + "/sdk", module + "/examples"} {
		if path == ok || strings.HasPrefix(path, ok+"/") {
			return !strings.Contains(path+"/", "/internal/")
		}
	}
	return false
}

// TestExamplesImportOnlySDK walks every .go file under examples/ (the
// plugins and the runtime adapters of examples/runtimes), tests and
// testdata modules included, and fails on an import of the module
// other than sdk/... or another example, naming the file and the import.
func TestExamplesImportOnlySDK(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	n, runtimes := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		if strings.HasPrefix(filepath.ToSlash(path), "../runtimes/") {
			runtimes++
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if !allowedImport(p) {
				pos := fset.Position(imp.Pos())
				if rel, err := filepath.Rel(root, pos.Filename); err == nil {
					pos.Filename = filepath.ToSlash(filepath.Join("examples", rel))
				}
				t.Errorf("%s imports %s: an example may import only %s/sdk/... (and other examples); move the code it needs into sdk/ or move the test out of examples/", pos, p, module)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("walked %d .go files under examples/: the walk is broken", n)
	}
	if runtimes == 0 {
		t.Fatal("walked no .go file under examples/runtimes/: the example runtime adapters must be checked too")
	}
}

func TestAllowedImport(t *testing.T) {
	for path, want := range map[string]bool{
		"net/http":                              true,
		"github.com/google/go-cmp/cmp":          true,
		module + "/sdk/gateway":                 true,
		module + "/sdk/sse":                     true,
		module + "/examples/plugins/mcpparser":  true,
		module + "/internal/sse":                false,
		module + "/sdk/internal/server":         false,
		module + "/examples/plugins/internal/x": false,
		module + "/cmd/abctl":                   false,
		module:                                  false,
	} {
		if got := allowedImport(path); got != want {
			t.Errorf("allowedImport(%q) = %v, want %v", path, got, want)
		}
	}
}
