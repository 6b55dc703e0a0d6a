package guard

import (
	"slices"
	"sort"
)

// matcher is an Aho-Corasick automaton over bytes: it finds every occurrence
// of every pattern in one pass over a text.
//
// The trie is stored flat and numbered breadth first, which keeps it small
// (about 13 bytes a node, no allocation per node or pattern):
//   - the children of node n are the nodes first[n] to first[n+1]-1, in
//     order of their byte, and label[c] is the byte that leads to node c;
//   - the nodes up to denseDepth deep come first, so node n < denseNodes has
//     the complete transition row dense[n*256:], which holds fail moves too.
type matcher struct {
	first []int32 // len(nodes)+1
	label []byte
	fail  []int32
	// report is the first node on the fail chain of each node (itself
	// included) that has outputs, or 0 (the root never has outputs).
	report []int32
	// outNode lists the nodes with outputs in increasing order;
	// outs[outStart[k]:outStart[k+1]] are the pattern ids ending at
	// outNode[k].
	outNode  []int32
	outStart []int32
	outs     []int32

	denseNodes int32
	dense      []int32
}

// denseDepth is the depth up to which nodes get complete transition rows.
const denseDepth = 3

// newMatcher builds the automaton for patterns; pattern i is reported as id
// i. Empty patterns are ignored.
func newMatcher(patterns []string) *matcher {
	// Build the trie in insertion order with sibling lists: inserting the
	// patterns sorted means a child always exists as the last one added to
	// its parent.
	order := make([]int32, 0, len(patterns))
	for i, p := range patterns {
		if p != "" {
			order = append(order, int32(i))
		}
	}
	// Equal patterns keep their order, so the build is deterministic (the
	// generated tables must not depend on the sort algorithm).
	sort.SliceStable(order, func(a, b int) bool { return patterns[order[a]] < patterns[order[b]] })
	// In sorted order each pattern adds the nodes after its common prefix
	// with the one before it, which gives the exact node count.
	capNodes := 1
	prev := ""
	for _, id := range order {
		p := patterns[id]
		l := 0
		for l < len(p) && l < len(prev) && p[l] == prev[l] {
			l++
		}
		capNodes += len(p) - l
		prev = p
	}
	tLabel := make([]byte, 1, capNodes)
	tFirst := make([]int32, 1, capNodes) // first child, 0 for none
	tLast := make([]int32, 1, capNodes)  // last child, 0 for none
	tNext := make([]int32, 1, capNodes)  // next sibling, 0 for none
	type out struct{ node, id int32 }
	var tOut []out
	for _, id := range order {
		p := patterns[id]
		cur := int32(0)
		for i := 0; i < len(p); i++ {
			if l := tLast[cur]; l != 0 && tLabel[l] == p[i] {
				cur = l
				continue
			}
			nx := int32(len(tLabel))
			tLabel = append(tLabel, p[i])
			tFirst = append(tFirst, 0)
			tLast = append(tLast, 0)
			tNext = append(tNext, 0)
			if tLast[cur] == 0 {
				tFirst[cur] = nx
			} else {
				tNext[tLast[cur]] = nx
			}
			tLast[cur] = nx
			cur = nx
		}
		tOut = append(tOut, out{cur, id})
	}
	n := len(tLabel)
	// Number the nodes breadth first; the children of a node get
	// consecutive numbers in byte order.
	newID := make([]int32, n)
	bfs := make([]int32, 1, n) // old ids in breadth-first order
	m := &matcher{first: make([]int32, n+1), label: make([]byte, n), fail: make([]int32, n), report: make([]int32, n)}
	depth := make([]uint8, n)
	for qi := 0; qi < len(bfs); qi++ {
		old := bfs[qi]
		m.first[qi] = int32(len(bfs))
		for c := tFirst[old]; c != 0; c = tNext[c] {
			newID[c] = int32(len(bfs))
			m.label[len(bfs)] = tLabel[c]
			depth[len(bfs)] = min(depth[qi]+1, 255)
			bfs = append(bfs, c)
		}
	}
	m.first[n] = int32(n)
	for i := range tOut {
		tOut[i].node = newID[tOut[i].node]
	}
	// Outputs grouped by node, ids of a node in insertion order.
	slices.SortStableFunc(tOut, func(a, b out) int { return int(a.node) - int(b.node) })
	for i, o := range tOut {
		if i == 0 || tOut[i-1].node != o.node {
			m.outNode = append(m.outNode, o.node)
			m.outStart = append(m.outStart, int32(len(m.outs)))
		}
		m.outs = append(m.outs, o.id)
	}
	m.outStart = append(m.outStart, int32(len(m.outs)))
	hasOut := make([]bool, n)
	for _, nd := range m.outNode {
		hasOut[nd] = true
	}
	// Fail links and report nodes, breadth first, so a node's fail target
	// is complete before the node.
	for s := int32(1); s < int32(n); s++ {
		if hasOut[s] {
			m.report[s] = s
		}
	}
	for s := int32(0); s < int32(n); s++ {
		for c := m.first[s]; c < m.first[s+1]; c++ {
			f := int32(0)
			if s != 0 {
				f = m.fail[s]
				for {
					if nx, ok := m.child(f, m.label[c]); ok {
						f = nx
						break
					}
					if f == 0 {
						break
					}
					f = m.fail[f]
				}
			}
			m.fail[c] = f
			if !hasOut[c] {
				m.report[c] = m.report[f]
			}
		}
	}
	// Complete rows for the shallow nodes, which are the first ones.
	for m.denseNodes < int32(n) && depth[m.denseNodes] <= denseDepth {
		m.denseNodes++
	}
	m.dense = make([]int32, int(m.denseNodes)*256)
	for s := int32(0); s < m.denseNodes; s++ {
		r := m.dense[int(s)*256 : int(s)*256+256]
		if s != 0 {
			copy(r, m.dense[int(m.fail[s])*256:][:256])
		}
		for c := m.first[s]; c < m.first[s+1]; c++ {
			r[m.label[c]] = c
		}
	}
	return m
}

// child returns the child of node n reached by byte b.
func (m *matcher) child(n int32, b byte) (int32, bool) {
	lo, hi := m.first[n], m.first[n+1]
	if hi-lo <= 8 {
		for c := lo; c < hi; c++ {
			if m.label[c] == b {
				return c, true
			}
		}
		return 0, false
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if m.label[mid] < b {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < m.first[n+1] && m.label[lo] == b {
		return lo, true
	}
	return 0, false
}

// outputs returns the pattern ids ending at node n, which has outputs.
func (m *matcher) outputs(n int32) []int32 {
	k, _ := slices.BinarySearch(m.outNode, n)
	return m.outs[m.outStart[k]:m.outStart[k+1]]
}

// each calls fn for every occurrence, with the end offset (exclusive) in text
// and the pattern id, in order of end offset.
func (m *matcher) each(text []byte, fn func(end int, id int32)) {
	s := int32(0)
	for i := 0; i < len(text); i++ {
		b := text[i]
		for {
			if s < m.denseNodes {
				s = m.dense[int(s)<<8|int(b)]
				break
			}
			if nx, ok := m.child(s, b); ok {
				s = nx
				break
			}
			s = m.fail[s]
		}
		for o := m.report[s]; o > 0; o = m.report[m.fail[o]] {
			for _, id := range m.outputs(o) {
				fn(i+1, id)
			}
		}
	}
}
