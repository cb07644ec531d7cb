package limits

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// CheckYAML refuses a YAML (or JSON) document whose structure would cost
// far more memory than its size suggests, before it is decoded:
//
//   - more than YAMLTokens tokens, estimated from its bytes without
//     allocating (the lexer and parser keep a few hundred bytes per token);
//   - nesting deeper than YAMLDepth (the parser recurses per level:
//     100,000 '[' took 4 GB);
//   - more than YAMLNodes nodes, or YAMLExpanded bytes of scalars, once
//     aliases are expanded (a 579-byte "billion laughs" took 2.1 GB to
//     decode; 1,500 aliases to one 400 KB string 4.4 GiB), counted on the
//     parsed tree with one count per anchor, so nothing is expanded.
//
// go-yaml has no option for any of these (its decoder stops at 10,000
// levels, far past where memory runs out), hence the pre-scan.
// Syntax errors are left to the decoder, which reports them with line and
// column.
func CheckYAML(name string, data []byte) error {
	if n := estimateTokens(data); int64(n) > YAMLTokens.Max() {
		return YAMLTokens.Error(name, "YAML token count", int64(n), "a chain or catalog file this large is not hand-written; split it into several files")
	}
	toks := lexer.Tokenize(string(data))
	if d, line := nesting(toks); int64(d) > YAMLDepth.Max() {
		return YAMLDepth.Error(fmt.Sprintf("%s:%d", name, line), "YAML nesting depth", -1, "flatten the document; no abkit file needs this depth")
	}
	if n, line := widest(toks, YAMLKeys.Max()); n > YAMLKeys.Max() {
		return YAMLKeys.Error(fmt.Sprintf("%s:%d", name, line), "keys in one YAML mapping", -1,
			"the parser takes time quadratic in a mapping's keys (60,000 took 85 s); no plugin config needs this many: move the data to a file the plugin reads")
	}
	f, err := parser.Parse(toks, 0)
	if err != nil {
		return nil // the decoder reports it, positioned
	}
	maxNodes, maxBytes := YAMLNodes.Max(), YAMLExpanded.Max()
	c := &aliasCounter{anchors: map[string]cost{}, max: maxNodes, maxBytes: maxBytes}
	for _, doc := range f.Docs {
		if doc == nil {
			continue
		}
		c.count(doc.Body)
		if c.total.nodes > maxNodes {
			return YAMLNodes.Error(name, "YAML node count after alias expansion", -1,
				"the document's aliases (*name) expand to too much data (an alias bomb?); write the values out or use fewer aliases")
		}
		if c.total.bytes > maxBytes {
			return YAMLExpanded.Error(name, "YAML size after alias expansion", -1,
				"the document's aliases (*name) repeat large values (an alias bomb?); write the values out or use fewer aliases")
		}
	}
	return nil
}

// estimateTokens bounds the number of tokens in data from above, closely
// enough: every token but a scalar is one of these bytes, and scalars are
// separated by them or by line ends.
func estimateTokens(data []byte) int {
	n := 0
	for _, b := range data {
		switch b {
		case '[', ']', '{', '}', ',', ':', '-', '\n', '&', '*', '!', '?', '|', '>', '#':
			n++
		}
	}
	return n
}

// nesting returns the deepest nesting level of the token stream and the
// line it is reached on. Flow collections count their brackets; block
// collections count indentation levels: a block entry ("- " or "key:")
// at a greater column than the enclosing one opens a level.
func nesting(toks token.Tokens) (int, int) {
	var cols []int
	flow, deepest, line := 0, 0, 0
	for i, tk := range toks {
		flow = flowDepth(flow, tk.Type)
		col := -1
		switch tk.Type {
		case token.SequenceEntryType:
			if flow == 0 {
				col = tk.Position.Column
			}
		case token.MappingValueType:
			if flow == 0 && i > 0 {
				col = toks[i-1].Position.Column
			}
		case token.DocumentHeaderType, token.DocumentEndType:
			cols = cols[:0]
		}
		if col >= 0 {
			for len(cols) > 0 && cols[len(cols)-1] > col {
				cols = cols[:len(cols)-1]
			}
			if len(cols) == 0 || cols[len(cols)-1] < col {
				cols = append(cols, col)
			}
		}
		if d := len(cols) + flow; d > deepest {
			deepest, line = d, tk.Position.Line
		}
	}
	return deepest, line
}

// flowDepth returns the depth of open flow collections ([ ], { }) after a
// token of type t, flow before it: nesting and widest count it alike. A
// document's start or end closes them all.
func flowDepth(flow int, t token.Type) int {
	switch t {
	case token.SequenceStartType, token.MappingStartType:
		return flow + 1
	case token.SequenceEndType, token.MappingEndType:
		return max(flow-1, 0)
	case token.DocumentHeaderType, token.DocumentEndType:
		return 0
	}
	return flow
}

// widest returns the most keys of one block mapping in the token stream,
// counted up to just past max, and the line where the count passed max
// (0 if it did not). go-yaml's parser recurses once per key of a block
// mapping and copies the keys after it at each level, so its time and
// stack grow with the square of a mapping's keys: 60,000 keys in 900 KB
// took dryrun 85 s. Counted on the lexer's tokens, before that parser
// runs.
func widest(toks token.Tokens, max int64) (int64, int) {
	type level struct {
		col  int
		keys int64
	}
	var open []level
	flow, most := 0, int64(0)
	for i, tk := range toks {
		flow = flowDepth(flow, tk.Type)
		switch tk.Type {
		case token.DocumentHeaderType, token.DocumentEndType:
			open = open[:0]
		case token.SequenceEntryType:
			if flow == 0 {
				// An entry closes the mappings deeper than it.
				for len(open) > 0 && open[len(open)-1].col > tk.Position.Column {
					open = open[:len(open)-1]
				}
			}
		case token.MappingValueType:
			if flow != 0 || i == 0 {
				continue
			}
			col := toks[i-1].Position.Column
			for len(open) > 0 && open[len(open)-1].col > col {
				open = open[:len(open)-1]
			}
			if len(open) == 0 || open[len(open)-1].col < col {
				open = append(open, level{col: col})
			}
			top := &open[len(open)-1]
			top.keys++
			if top.keys > most {
				most = top.keys
				if most > max {
					return most, tk.Position.Line
				}
			}
		}
	}
	return most, 0
}

// aliasCounter counts nodes, and the bytes of their scalars, as the
// decoder would see them with aliases expanded: an alias costs what its
// anchor's value costs. Counting bytes too matters: 1,500 aliases to one
// 400 KB string are few nodes but 600 MB once decoded (27 s, 4.4 GiB).
// Counts saturate just past the bounds, so no arithmetic overflows.
type aliasCounter struct {
	anchors  map[string]cost
	total    cost
	max      int64
	maxBytes int64
}

// cost is what a subtree costs expanded: nodes and scalar bytes.
type cost struct{ nodes, bytes int64 }

func (c *aliasCounter) count(n ast.Node) {
	c.total = c.add(c.total, c.size(n))
}

func (c *aliasCounter) add(a, b cost) cost {
	return cost{nodes: satTo(a.nodes+b.nodes, c.max), bytes: satTo(a.bytes+b.bytes, c.maxBytes)}
}

func satTo(n, max int64) int64 {
	if n < 0 || n > max+1 {
		return max + 1
	}
	return n
}

var one = cost{nodes: 1}

// collection is the cost of a mapping or sequence: one node for itself
// plus its members.
func collection[N ast.Node](c *aliasCounter, vs []N) cost {
	s := one
	for _, v := range vs {
		s = c.add(s, c.size(v))
	}
	return s
}

func (c *aliasCounter) size(n ast.Node) cost {
	switch n := n.(type) {
	case nil:
		return cost{}
	case *ast.MappingNode:
		return collection(c, n.Values)
	case *ast.MappingValueNode:
		return c.add(c.size(n.Key), c.size(n.Value))
	case *ast.MappingKeyNode:
		return c.add(one, c.size(n.Value))
	case *ast.SequenceNode:
		return collection(c, n.Values)
	case *ast.SequenceEntryNode:
		return c.size(n.Value)
	case *ast.TagNode:
		return c.size(n.Value)
	case *ast.AnchorNode:
		s := c.size(n.Value)
		if n.Name != nil {
			c.anchors[n.Name.GetToken().Value] = s
		}
		return s
	case *ast.AliasNode:
		if n.Value != nil {
			if s, ok := c.anchors[n.Value.GetToken().Value]; ok {
				return s
			}
		}
		return one
	case *ast.CommentGroupNode, *ast.CommentNode:
		return cost{}
	}
	b := int64(1)
	if t := n.GetToken(); t != nil {
		b += int64(len(t.Value))
	}
	return cost{nodes: 1, bytes: b}
}
