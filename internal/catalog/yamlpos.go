package catalog

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// positions maps a YAML path such as "$.inbound[1].name" to the line and
// column it starts at. For a mapping key the place is the key's; for a
// sequence item it is the item's first key or value.
type positions map[string]place

// place is a 1-based line and column in a file.
type place struct{ line, col int }

// indexPositions parses data and records the line of every mapping key
// and sequence item. Errors are left to the strict decoder, which reports
// them with line and column.
func indexPositions(data []byte) positions {
	pos := positions{}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return pos
	}
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			walk(pos, "$", doc.Body)
		}
		break // chain files hold one document
	}
	return pos
}

func placeOf(n ast.Node) place {
	if n == nil {
		return place{}
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return place{tk.Position.Line, tk.Position.Column}
	}
	return place{}
}

func walk(pos positions, path string, n ast.Node) {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			walkPair(pos, path, mv)
		}
	case *ast.MappingValueNode:
		walkPair(pos, path, n)
	case *ast.SequenceNode:
		for i, v := range n.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			at := placeOf(v)
			if mv, ok := v.(*ast.MappingValueNode); ok {
				at = placeOf(mv.Key)
			} else if m, ok := v.(*ast.MappingNode); ok && len(m.Values) > 0 {
				at = placeOf(m.Values[0].Key)
			}
			pos[p] = at
			walk(pos, p, v)
		}
	case *ast.TagNode:
		walk(pos, path, n.Value)
	case *ast.AnchorNode:
		walk(pos, path, n.Value)
	}
}

func walkPair(pos positions, path string, mv *ast.MappingValueNode) {
	if mv == nil || mv.Key == nil {
		return
	}
	p := path + "." + keyName(mv.Key)
	pos[p] = placeOf(mv.Key)
	walk(pos, p, mv.Value)
}

// line returns the line of path, falling back to its parents.
func (p positions) line(path string) int { return p.at(path).line }

// at returns the place of path, falling back to its parents.
func (p positions) at(path string) place {
	for path != "" {
		if l, ok := p[path]; ok {
			return l
		}
		// Drop the last segment: ".key" or "[i]".
		i := len(path) - 1
		for i > 0 && path[i] != '.' && path[i] != '[' {
			i--
		}
		path = path[:i]
	}
	return place{}
}

// pathAt returns the YAML path of the key or value that starts at line and
// column of data, such as "$.inbound[0].on_error", or "" when none does.
func pathAt(data []byte, line, col int) string {
	f, err := parser.ParseBytes(data, 0)
	if err != nil || len(f.Docs) == 0 || f.Docs[0] == nil || f.Docs[0].Body == nil {
		return ""
	}
	found := ""
	at := func(n ast.Node) bool {
		if n == nil {
			return false
		}
		tk := n.GetToken()
		return tk != nil && tk.Position != nil && tk.Position.Line == line && tk.Position.Column == col
	}
	var visit func(path string, n ast.Node)
	visit = func(path string, n ast.Node) {
		if found != "" || n == nil {
			return
		}
		if at(n) {
			found = path
			return
		}
		switch n := n.(type) {
		case *ast.MappingNode:
			for _, mv := range n.Values {
				visit(path, mv)
			}
		case *ast.MappingValueNode:
			if n.Key == nil {
				return
			}
			p := path + "." + keyName(n.Key)
			if at(n.Key) {
				found = p
				return
			}
			visit(p, n.Value)
		case *ast.SequenceNode:
			for i, v := range n.Values {
				visit(fmt.Sprintf("%s[%d]", path, i), v)
			}
		case *ast.TagNode:
			visit(path, n.Value)
		case *ast.AnchorNode:
			visit(path, n.Value)
		}
	}
	visit("$", f.Docs[0].Body)
	return found
}

// keyName is a mapping key as written, without the quotes a JSON or quoted
// YAML key carries in its source form.
func keyName(k ast.MapKeyNode) string {
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	return k.String()
}
