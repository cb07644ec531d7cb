// Package mutation measures how much of the reference implementations'
// behaviour the conformance suites can see: it applies small faults
// (mutants) to the reference runtime and to the example plugins' hooks,
// builds each mutant with `go build -overlay` (the tree is never copied or
// touched), runs the suite that owns it against the binary, and counts the
// mutants some case catches (kills).
//
// The driver is written over go/ast instead of using an off-the-shelf Go
// mutation tool: those judge a mutant by the package's own `go test`, while
// here the judge is an external process suite (`conformance run`) against a
// binary built from a different package (cmd/abkit-runtime, an example's
// cmd), and the enumeration must skip the harness's deliberate-bug
// branches.
package mutation

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/conformance/judge"
)

// Operators, as named in mutant keys and reports.
const (
	OpCond     = "cond"     // a comparison negated: == ↔ !=, < ↔ >=, > ↔ <=
	OpBoundary = "boundary" // a comparison's boundary moved: < ↔ <=, > ↔ >=
	OpLogic    = "logic"    // && ↔ ||
	OpNot      = "not"      // a ! removed
	OpCall     = "call"     // a call statement (plain, defer or go) removed
	OpStmt     = "stmt"     // an assignment or ++/-- removed
	OpLoop     = "loop"     // a range loop walks its slice backwards
	OpConst    = "const"    // an integer literal changed (0→1, 1→0, n→n+1) or true ↔ false
)

// ExamplesFile is where an example plugin keeps its behaviour examples,
// relative to its directory; the plugin suite runs them with the contract
// cases (docs/conformance.md, "Examples").
const ExamplesFile = "testdata/examples.yaml"

// Suite names.
const (
	SuiteRuntime = judge.SuiteRuntime
	SuitePlugin  = judge.SuitePlugin
)

// Mutant is one fault applied to one file.
type Mutant struct {
	// Key identifies the mutant across edits elsewhere in its file:
	// path:Func:op#n, n counting that operator's sites in the function in
	// source order.
	Key   string `json:"key"`
	Suite string `json:"suite"`
	// File is the mutated file, relative to the module root; Line and Col
	// the site.
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Op   string `json:"op"`
	// Desc says what changed, e.g. `"<" → "<="`.
	Desc string `json:"desc"`
	// Build is the package built for the mutant (./cmd/abkit-runtime or an
	// example's cmd).
	Build string `json:"build"`
	// Examples is the plugin's examples file (relative to the module
	// root), run as part of the plugin suite; empty for none.
	Examples string `json:"examples,omitempty"`

	src []byte
}

// Pos is the mutant's site as file:line:col.
func (m *Mutant) Pos() string { return fmt.Sprintf("%s:%d:%d", m.File, m.Line, m.Col) }

// Target is one package whose files are mutated.
type Target struct {
	Suite string
	// Dir is the package directory relative to the module root.
	Dir string
	// Build is the package built for its mutants.
	Build string
	// Examples is the examples file the plugin suite also runs.
	Examples string
	// Funcs keeps the functions mutated (by name: "Recv.Name", "Name",
	// or "const"/"var" for package-level declarations); nil keeps all.
	Funcs func(name string) bool
	// Files keeps the files mutated (by base name); nil keeps all.
	Files func(base string) bool
}

// RuntimeTargets are the reference runtime's packages: the three runtimes,
// the SSE framer they stream with, and the refruntime adapters.
func RuntimeTargets() []Target {
	b := "./cmd/abkit-runtime"
	return []Target{
		{Suite: SuiteRuntime, Dir: "internal/pipeline", Build: b},
		{Suite: SuiteRuntime, Dir: "internal/dispatch", Build: b},
		{Suite: SuiteRuntime, Dir: "internal/hookbus", Build: b},
		// The framer only (sse.go): the pipeline frames and nothing else.
		// Parse, ParseView, singleData, trimSpace and parseRetry serve
		// replay and plugins, as do the Reader and Parser of reader.go and
		// parser.go.
		{Suite: SuiteRuntime, Dir: "sdk/sse", Build: b,
			Files: func(base string) bool { return base == "sse.go" },
			Funcs: func(n string) bool {
				return n != "Parse" && n != "ParseView" && n != "singleData" && n != "trimSpace" && n != "parseRetry"
			}},
		// Main validates the bug name, GRPCClient is the runner's side and
		// replay runs only under a deliberate bug; none runs in a reference
		// runtime serving a scenario; failFast, plainBuildMessage and
		// reframe run only in a variant taking another alternative.
		{Suite: SuiteRuntime, Dir: "internal/refruntime", Build: b, Funcs: func(n string) bool {
			return n != "Main" && n != "GRPCPlugin.GRPCClient" && n != "replay" &&
				n != "failFast" && n != "plainBuildMessage" && n != "reframe"
		}},
	}
}

// hookMethods are the contract methods of the three families a plugin
// implements: the host calls them, so the plugin suite can see them.
var hookMethods = map[string]bool{
	"Name": true, "Capabilities": true, "Init": true, "Ready": true, "Shutdown": true,
	"OnRequest": true, "OnResponse": true, "OnResponseFrame": true, "OnFinish": true,
	"Call": true, "Notify": true, "Spec": true, "OnSubmit": true, "OnTool": true,
	"Manifest": true,
}

// PluginTargets are the example plugins that have a binary, their hook
// bodies only: the methods of the contract interfaces (and Manifest), not
// their parsing or matching helpers, whose results no contract fixes.
func PluginTargets(root string) ([]Target, error) {
	ents, err := os.ReadDir(filepath.Join(root, "examples", "plugins"))
	if err != nil {
		return nil, fmt.Errorf("list the example plugins: %w", err)
	}
	var ts []Target
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "internal" {
			continue
		}
		dir := filepath.Join("examples", "plugins", e.Name())
		mains, _ := filepath.Glob(filepath.Join(root, dir, "cmd", "*", "main.go"))
		if len(mains) != 1 {
			continue // no binary (the built-in catalog)
		}
		bin, _ := filepath.Rel(root, filepath.Dir(mains[0]))
		var examples string
		if _, err := os.Stat(filepath.Join(root, dir, ExamplesFile)); err == nil {
			examples = filepath.ToSlash(filepath.Join(dir, ExamplesFile))
		}
		ts = append(ts, Target{Suite: SuitePlugin, Dir: filepath.ToSlash(dir), Build: "./" + filepath.ToSlash(bin), Examples: examples,
			Funcs: func(n string) bool {
				if i := strings.LastIndexByte(n, '.'); i >= 0 {
					n = n[i+1:]
				}
				return hookMethods[n]
			}})
	}
	return ts, nil
}

// Enumerate returns every mutant of the targets' non-test files, in a
// stable order (file, then position, then operator).
func Enumerate(root string, targets []Target) ([]*Mutant, error) {
	var all []*Mutant
	for _, t := range targets {
		files, err := filepath.Glob(filepath.Join(root, t.Dir, "*.go"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || (t.Files != nil && !t.Files(filepath.Base(f))) {
				continue
			}
			ms, err := enumerateFile(root, f, t)
			if err != nil {
				return nil, err
			}
			all = append(all, ms...)
		}
	}
	return all, nil
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

type site struct {
	pos   token.Pos
	op    string
	desc  string
	edits []edit
	// needSlices: the mutant calls slices.Backward.
	needSlices bool
}

func enumerateFile(root, path string, t Target) ([]*Mutant, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, path)
	rel = filepath.ToSlash(rel)
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	importsSlices := false
	for _, im := range f.Imports {
		if im.Path.Value == `"slices"` && im.Name == nil {
			importsSlices = true
		}
	}

	var out []*Mutant
	emit := func(fn string, sites []site) {
		count := map[string]int{}
		for _, s := range sites {
			count[s.op]++
			p := fset.Position(s.pos)
			m := &Mutant{
				Key:   fmt.Sprintf("%s:%s:%s#%d", rel, fn, s.op, count[s.op]),
				Suite: t.Suite, File: rel, Line: p.Line, Col: p.Column, Op: s.op, Desc: s.desc, Build: t.Build, Examples: t.Examples,
			}
			edits := s.edits
			if s.needSlices && !importsSlices {
				// On the package clause's line, so line numbers hold.
				edits = append(edits, edit{off(f.Name.End()), off(f.Name.End()), `; import "slices"`})
			}
			m.src = apply(src, edits)
			out = append(out, m)
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := funcName(d)
			if d.Body == nil || (t.Funcs != nil && !t.Funcs(name)) {
				continue
			}
			emit(name, collect(d.Body, src, off))
		case *ast.GenDecl:
			if d.Tok != token.CONST && d.Tok != token.VAR {
				continue
			}
			if t.Funcs != nil && !t.Funcs(d.Tok.String()) {
				continue
			}
			var sites []site
			for _, sp := range d.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok {
					for _, v := range vs.Values {
						sites = append(sites, collectConsts(v, src, off)...)
					}
				}
			}
			emit(d.Tok.String(), sites)
		}
	}
	return out, nil
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	typ := d.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok {
		typ = ix.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

func apply(src []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b bytes.Buffer
	last := 0
	for _, e := range edits {
		b.Write(src[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(src[last:])
	return b.Bytes()
}

// blank replaces a statement's text with spaces, keeping its newlines so
// that every later line keeps its number.
func blank(src []byte, start, end int) edit {
	b := []byte(string(src[start:end]))
	for i, c := range b {
		if c != '\n' {
			b[i] = ' '
		}
	}
	return edit{start, end, string(b)}
}

// guarded reports whether an expression mentions the harness's
// deliberate-bug switch (bug, Bug) or the trace recorder (rec, Trace), which the
// reference runtime binary never sets: code under such a guard does not
// run in the reference, so its mutants could only be equivalent.
func guarded(e ast.Expr) string {
	why := ""
	ast.Inspect(e, func(n ast.Node) bool {
		var name string
		switch n := n.(type) {
		case *ast.Ident:
			name = n.Name
		case *ast.SelectorExpr:
			name = n.Sel.Name
		}
		switch name {
		case "bug", "Bug":
			why = "bug"
		case "rec", "Trace":
			if why == "" {
				why = "rec"
			}
		}
		return true
	})
	return why
}

var negate = map[token.Token]token.Token{
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LSS: token.GEQ, token.GEQ: token.LSS,
	token.GTR: token.LEQ, token.LEQ: token.GTR,
}

var boundary = map[token.Token]token.Token{
	token.LSS: token.LEQ, token.LEQ: token.LSS,
	token.GTR: token.GEQ, token.GEQ: token.GTR,
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

// collect returns the mutation sites of a function body in source order.
func collect(body *ast.BlockStmt, src []byte, off func(token.Pos) int) []site {
	var sites []site
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			if guarded(n.Cond) != "" {
				// Only the else branch runs in the reference.
				if n.Else != nil {
					ast.Inspect(n.Else, walk)
				}
				return false
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && guarded(n.Tag) == "bug" {
				for _, c := range n.Body.List {
					if cc := c.(*ast.CaseClause); cc.List == nil {
						for _, s := range cc.Body {
							ast.Inspect(s, walk)
						}
					}
				}
				return false
			}
		case *ast.BinaryExpr:
			opText := n.Op.String()
			start, end := off(n.OpPos), off(n.OpPos)+len(opText)
			if neg, ok := negate[n.Op]; ok {
				sites = append(sites, site{pos: n.OpPos, op: OpCond, desc: fmt.Sprintf("%q → %q", opText, neg.String()),
					edits: []edit{{start, end, neg.String()}}})
				if b, ok := boundary[n.Op]; ok && !isNil(n.X) && !isNil(n.Y) {
					sites = append(sites, site{pos: n.OpPos, op: OpBoundary, desc: fmt.Sprintf("%q → %q", opText, b.String()),
						edits: []edit{{start, end, b.String()}}})
				}
			}
			switch n.Op {
			case token.LAND:
				sites = append(sites, site{pos: n.OpPos, op: OpLogic, desc: `"&&" → "||"`, edits: []edit{{start, end, "||"}}})
			case token.LOR:
				sites = append(sites, site{pos: n.OpPos, op: OpLogic, desc: `"||" → "&&"`, edits: []edit{{start, end, "&&"}}})
			}
		case *ast.UnaryExpr:
			if n.Op == token.NOT {
				sites = append(sites, site{pos: n.OpPos, op: OpNot, desc: `"!" removed`,
					edits: []edit{{off(n.OpPos), off(n.OpPos) + 1, ""}}})
			}
		case *ast.ExprStmt:
			if c, ok := n.X.(*ast.CallExpr); ok && guarded(c.Fun) == "" {
				sites = append(sites, site{pos: n.Pos(), op: OpCall, desc: "removed " + snippet(src, off(c.Fun.Pos()), off(c.Fun.End())) + "(…)",
					edits: []edit{blank(src, off(n.Pos()), off(n.End()))}})
			}
		case *ast.DeferStmt:
			sites = append(sites, site{pos: n.Pos(), op: OpCall, desc: "removed defer " + snippet(src, off(n.Call.Fun.Pos()), off(n.Call.Fun.End())) + "(…)",
				edits: []edit{blank(src, off(n.Pos()), off(n.End()))}})
		case *ast.GoStmt:
			sites = append(sites, site{pos: n.Pos(), op: OpCall, desc: "removed go " + snippet(src, off(n.Call.Fun.Pos()), off(n.Call.Fun.End())) + "(…)",
				edits: []edit{blank(src, off(n.Pos()), off(n.End()))}})
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE {
				sites = append(sites, site{pos: n.Pos(), op: OpStmt, desc: "removed " + snippet(src, off(n.Pos()), off(n.End())),
					edits: []edit{blank(src, off(n.Pos()), off(n.End()))}})
			}
		case *ast.IncDecStmt:
			sites = append(sites, site{pos: n.Pos(), op: OpStmt, desc: "removed " + snippet(src, off(n.Pos()), off(n.End())),
				edits: []edit{blank(src, off(n.Pos()), off(n.End()))}})
		case *ast.RangeStmt:
			if n.X != nil {
				sites = append(sites, site{pos: n.For, op: OpLoop, desc: "range " + snippet(src, off(n.X.Pos()), off(n.X.End())) + " backwards",
					edits:      []edit{{off(n.X.Pos()), off(n.X.Pos()), "slices.Backward("}, {off(n.X.End()), off(n.X.End()), ")"}},
					needSlices: true})
			}
		case *ast.BasicLit, *ast.Ident:
			sites = append(sites, constSite(n.(ast.Expr), src, off)...)
		}
		return true
	}
	ast.Inspect(body, walk)
	// ast.Inspect visits a loop before its body, so sites are already in
	// source order except where an operator sits after its operands' sites;
	// order by position for stable keys.
	sort.SliceStable(sites, func(i, j int) bool { return sites[i].pos < sites[j].pos })
	return sites
}

func collectConsts(e ast.Expr, src []byte, off func(token.Pos) int) []site {
	var sites []site
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok {
			sites = append(sites, constSite(x, src, off)...)
		}
		return true
	})
	return sites
}

func constSite(e ast.Expr, src []byte, off func(token.Pos) int) []site {
	switch n := e.(type) {
	case *ast.BasicLit:
		if n.Kind != token.INT {
			return nil
		}
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil {
			return nil
		}
		nv := v + 1
		if v == 1 {
			nv = 0
		}
		return []site{{pos: n.Pos(), op: OpConst, desc: fmt.Sprintf("%s → %d", n.Value, nv),
			edits: []edit{{off(n.Pos()), off(n.End()), strconv.FormatInt(nv, 10)}}}}
	case *ast.Ident:
		flip := map[string]string{"true": "false", "false": "true"}[n.Name]
		if flip == "" {
			return nil
		}
		return []site{{pos: n.Pos(), op: OpConst, desc: n.Name + " → " + flip,
			edits: []edit{{off(n.Pos()), off(n.End()), flip}}}}
	}
	return nil
}

func snippet(src []byte, start, end int) string {
	s := strings.Join(strings.Fields(string(src[start:end])), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
