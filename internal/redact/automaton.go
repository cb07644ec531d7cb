package redact

import "math/bits"

// automaton finds, in one pass over a text, which of up to 64 ASCII
// patterns occur in it: an Aho–Corasick automaton compiled to a table
// (state × byte class → state) over ASCII-folded input, each pattern
// either matched ignoring ASCII case or confirmed byte for byte where it
// ends. Redaction asks one question per body, "which rules' trigger words
// are in it?", and before asked it once per trigger word: one case-folded
// or exact search of the whole body each, two dozen passes.
//
// Written here rather than taken from a Go module: the one Aho–Corasick
// module the project's registry list offers (github.com/coregx/ahocorasick
// v0.3.1, its only version) matches bytes exactly only, so folding would
// take a copy of every body or every case variant of "bearer" as a
// pattern, and it reports overlapping matches as an allocated slice of
// every occurrence, where this needs a set of which patterns occur,
// without allocating, stopping once all are found.
type automaton struct {
	class  [256]uint8 // byte → class; 0 is every byte no pattern holds
	nclass int
	// next[row+class] is the next state's row (state × nclass), with
	// hasOut set when a pattern ends in that state: one lookup, an add
	// and a test per byte, no multiply.
	next []uint32
	// out is, per state row / nclass, the patterns that end there
	// (through failure links too), as bits of pattern indexes.
	out []uint64
	// lead has bit c1 | c2<<8 set for two bytes (in class) that begin a
	// pattern: find passes every place where no pattern begins without
	// following the table.
	lead [1 << 16 / 64]uint64
	pats []string // as given
	fold uint64   // patterns matched ignoring ASCII case
	all  uint64   // every pattern
}

// newAutomaton compiles pats; fold[i] says whether pats[i] is matched
// ignoring ASCII case. It panics on more than 64 patterns or an empty
// one: the pattern sets are the package's own.
func newAutomaton(pats []string, fold []bool) *automaton {
	if len(pats) > 64 {
		panic("redact: more than 64 trigger patterns")
	}
	a := &automaton{pats: pats}
	// Classes: one per distinct folded byte in the patterns.
	a.nclass = 1
	for _, p := range pats {
		if p == "" {
			panic("redact: empty trigger pattern")
		}
		for i := 0; i < len(p); i++ {
			c := lower(p[i])
			if a.class[c] == 0 {
				a.class[c] = uint8(a.nclass)
				a.nclass++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		a.class[c] = a.class[c+'a'-'A']
	}
	// The trie, with -1 for a missing edge.
	type node struct {
		edge []int
		fail int
		out  uint64
	}
	newNode := func() node {
		e := make([]int, a.nclass)
		for i := range e {
			e[i] = -1
		}
		return node{edge: e}
	}
	nodes := []node{newNode()}
	for i, p := range pats {
		s := 0
		for j := 0; j < len(p); j++ {
			c := a.class[p[j]]
			if nodes[s].edge[c] < 0 {
				nodes[s].edge[c] = len(nodes)
				nodes = append(nodes, newNode())
			}
			s = nodes[s].edge[c]
		}
		nodes[s].out |= 1 << i
		a.all |= 1 << i
		if fold[i] {
			a.fold |= 1 << i
		}
	}
	if len(nodes) > 1<<16 {
		panic("redact: trigger automaton too large")
	}
	// Breadth first: failure links, and every missing edge resolved
	// through them, so that scanning is one table lookup per byte.
	queue := []int{}
	for c := range a.nclass {
		if t := nodes[0].edge[c]; t < 0 {
			nodes[0].edge[c] = 0
		} else {
			nodes[t].fail = 0
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		nodes[s].out |= nodes[nodes[s].fail].out
		for c := range a.nclass {
			t := nodes[s].edge[c]
			if t < 0 {
				nodes[s].edge[c] = nodes[nodes[s].fail].edge[c]
				continue
			}
			nodes[t].fail = nodes[nodes[s].fail].edge[c]
			queue = append(queue, t)
		}
	}
	a.next = make([]uint32, len(nodes)*a.nclass)
	a.out = make([]uint64, len(nodes))
	for s, n := range nodes {
		for c, t := range n.edge {
			row := uint32(t * a.nclass)
			if nodes[t].out != 0 {
				row |= hasOut
			}
			a.next[s*a.nclass+c] = row
		}
		a.out[s] = n.out
	}
	// A pattern starts at i only where b[i], b[i+1] are its first two
	// bytes (in class); one of one byte starts wherever that byte is.
	for _, p := range pats {
		for c1 := range 256 {
			if a.class[c1] != a.class[p[0]] {
				continue
			}
			for c2 := range 256 {
				if len(p) == 1 || a.class[c2] == a.class[p[1]] {
					k := c1 | c2<<8
					a.lead[k/64] |= 1 << (k % 64)
				}
			}
		}
	}
	return a
}

// hasOut marks, in automaton.next, a state where a pattern ends.
const hasOut = 1 << 31

// skipStart returns the first index from i where a pattern may begin: a
// byte pair in lead, or the last byte. Most places of a text begin no
// pattern: passing them one bit test each, without the table's dependent
// load, made the pass over a chat stream about twice as fast (one byte
// at a time), and testing pairs passes the many letters that begin some
// pattern but are not followed by its second byte ("e" begins eyJ, "ey"
// is rarer).
//
// Passing i from the start state loses nothing: no pattern begins at i,
// and no match is in progress (its bytes so far would be the state). The
// table's state after b[i] (a prefix of one byte, "s" of sk-) can only
// lead to a pattern beginning at i.
func skipStart(lead *[1 << 16 / 64]uint64, b []byte, i int) int {
	for ; i+1 < len(b); i++ {
		k := uint(b[i]) | uint(b[i+1])<<8
		if lead[k/64]&(1<<(k%64)) != 0 {
			return i
		}
	}
	return i
}

// find returns the patterns that occur in b, as bits of their indexes.
func (a *automaton) find(b []byte) uint64 {
	var found uint64
	var row uint32
	next, out, class, lead, nc := a.next, a.out, &a.class, &a.lead, uint32(a.nclass)
	for i := 0; i < len(b); i++ {
		if row == 0 {
			if i = skipStart(lead, b, i); i == len(b) {
				break
			}
		}
		c := b[i]
		t := next[row+uint32(class[c])]
		row = t &^ hasOut
		if t&hasOut == 0 {
			continue
		}
		o := out[row/nc] &^ found
		if o == 0 {
			continue
		}
		// Folded matches count as they are; exact ones are confirmed
		// byte for byte where they end.
		found |= o & a.fold
		for exact := o &^ a.fold; exact != 0; exact &= exact - 1 {
			k := bits.TrailingZeros64(exact)
			p := a.pats[k]
			if string(b[i+1-len(p):i+1]) == p {
				found |= 1 << k
			}
		}
		if found == a.all {
			break
		}
	}
	return found
}

// shapeTriggers is the automaton of every shape rule's trigger words;
// shapeOf maps a pattern to its rule's index in shapes.
var shapeTriggers, shapeOf = func() (*automaton, []int) {
	var pats []string
	var fold []bool
	var of []int
	for i, r := range shapes {
		for _, t := range r.triggers {
			pats = append(pats, t)
			fold = append(fold, r.fold)
			of = append(of, i)
		}
	}
	return newAutomaton(pats, fold), of
}()

// triggeredShapes returns the shape rules one of whose trigger words
// occurs in b, as bits of their indexes in shapes.
func triggeredShapes(b []byte) uint64 {
	var rules uint64
	for f := shapeTriggers.find(b); f != 0; f &= f - 1 {
		rules |= 1 << shapeOf[bits.TrailingZeros64(f)]
	}
	return rules
}

// keyTriggerSet is keyTriggers as one automaton, all ignoring case.
var keyTriggerSet = func() *automaton {
	fold := make([]bool, len(keyTriggers))
	for i := range fold {
		fold[i] = true
	}
	return newAutomaton(keyTriggers, fold)
}()

// any reports whether one of the patterns occurs in b; it is for an
// automaton whose patterns all ignore case.
func (a *automaton) any(b []byte) bool {
	var row uint32
	next, class, lead := a.next, &a.class, &a.lead
	for i := 0; i < len(b); i++ {
		if row == 0 {
			// As in find: the quoted keys of a chat stream's every line
			// ("choices", "index", "delta") were 12 % of redacting it.
			if i = skipStart(lead, b, i); i == len(b) {
				break
			}
		}
		t := next[row+uint32(class[b[i]])]
		if t&hasOut != 0 {
			return true
		}
		row = t
	}
	return false
}
