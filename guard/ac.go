package guard

import "sort"

// matcher is an Aho-Corasick automaton over bytes: it finds every occurrence
// of every pattern in one pass over a text.
type matcher struct {
	root  [256]int32 // transitions of the root, dense
	nodes []acNode
	edges []acEdge
	// outs[outStart[n]:outStart[n+1]] are the pattern ids ending at node n.
	outs     []int32
	outStart []int32
	// report is the first node on the fail chain of each node (itself
	// included) that has outputs, or -1.
	report []int32
	// The nodes near the root, where a scan spends most of its time, have
	// complete transition rows: denseRow[n] indexes dense, or is -1.
	denseRow []int32
	dense    []int32
}

// denseDepth is the depth up to which nodes get complete transition rows.
const denseDepth = 3

type acNode struct {
	first, count int32 // edges[first:first+count], sorted by byte
	fail         int32
	dict         int32 // nearest node on the fail chain with outputs, or -1
}

type acEdge struct {
	b    byte
	next int32
}

// newMatcher builds the automaton for patterns; pattern i is reported as id
// i. Empty patterns are ignored.
func newMatcher(patterns []string) *matcher {
	// Insert the patterns in sorted order: a child then always exists as
	// the last one added to its parent, so the trie needs no maps.
	order := make([]int, 0, len(patterns))
	for i, p := range patterns {
		if p != "" {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool { return patterns[order[a]] < patterns[order[b]] })
	kids := [][]acEdge{nil}
	outs := [][]int32{nil}
	for _, id := range order {
		p := patterns[id]
		cur := int32(0)
		for i := 0; i < len(p); i++ {
			ks := kids[cur]
			if n := len(ks); n > 0 && ks[n-1].b == p[i] {
				cur = ks[n-1].next
				continue
			}
			nx := int32(len(kids))
			kids = append(kids, nil)
			outs = append(outs, nil)
			kids[cur] = append(kids[cur], acEdge{p[i], nx})
			cur = nx
		}
		outs[cur] = append(outs[cur], int32(id))
	}
	m := &matcher{nodes: make([]acNode, len(kids)), outStart: make([]int32, len(kids)+1)}
	for i, o := range outs {
		m.outStart[i] = int32(len(m.outs))
		m.outs = append(m.outs, o...)
	}
	m.outStart[len(kids)] = int32(len(m.outs))
	total := 0
	for _, ks := range kids {
		total += len(ks)
	}
	m.edges = make([]acEdge, 0, total)
	for i, ks := range kids {
		m.nodes[i].first = int32(len(m.edges))
		m.nodes[i].count = int32(len(ks))
		m.nodes[i].dict = -1
		m.edges = append(m.edges, ks...)
	}
	for _, e := range m.children(0) {
		m.root[e.b] = e.next
	}
	// Fail links, breadth first.
	queue := make([]int32, 0, len(kids))
	for _, e := range m.children(0) {
		queue = append(queue, e.next)
	}
	bfs := make([]int32, 0, len(kids))
	for qi := 0; qi < len(queue); qi++ {
		n := queue[qi]
		bfs = append(bfs, n)
		for _, e := range m.children(n) {
			f := m.nodes[n].fail
			for {
				if nx, ok := m.child(f, e.b); ok {
					m.nodes[e.next].fail = nx
					break
				}
				if f == 0 {
					break
				}
				f = m.nodes[f].fail
			}
			fl := m.nodes[e.next].fail
			if m.hasOut(fl) {
				m.nodes[e.next].dict = fl
			} else {
				m.nodes[e.next].dict = m.nodes[fl].dict
			}
			queue = append(queue, e.next)
		}
	}
	m.report = make([]int32, len(kids))
	m.report[0] = -1
	for _, n := range bfs {
		if m.hasOut(n) {
			m.report[n] = n
		} else {
			m.report[n] = m.nodes[n].dict
		}
	}
	// Complete rows for the root and the shallow nodes, in breadth-first
	// order so a node's fail row exists before its own.
	m.denseRow = make([]int32, len(kids))
	for i := range m.denseRow {
		m.denseRow[i] = -1
	}
	depth := make([]int, len(kids))
	for _, e := range m.children(0) {
		depth[e.next] = 1
	}
	addRow := func(n int32) {
		row := int32(len(m.dense) / 256)
		m.denseRow[n] = row
		m.dense = append(m.dense, make([]int32, 256)...)
		r := m.dense[int(row)*256 : int(row)*256+256]
		if n == 0 {
			copy(r, m.root[:])
			return
		}
		copy(r, m.dense[int(m.denseRow[m.nodes[n].fail])*256:][:256])
		for _, e := range m.children(n) {
			r[e.b] = e.next
		}
	}
	addRow(0)
	for _, n := range bfs {
		for _, e := range m.children(n) {
			depth[e.next] = depth[n] + 1
		}
		if depth[n] <= denseDepth {
			addRow(n)
		}
	}
	return m
}

func (m *matcher) hasOut(n int32) bool { return m.outStart[n+1] > m.outStart[n] }

func (m *matcher) children(n int32) []acEdge {
	nd := m.nodes[n]
	return m.edges[nd.first : nd.first+nd.count]
}

func (m *matcher) child(n int32, b byte) (int32, bool) {
	if n == 0 {
		nx := m.root[b]
		return nx, nx != 0
	}
	es := m.children(n)
	if len(es) <= 8 {
		for _, e := range es {
			if e.b == b {
				return e.next, true
			}
		}
		return 0, false
	}
	lo, hi := 0, len(es)
	for lo < hi {
		mid := (lo + hi) / 2
		if es[mid].b < b {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(es) && es[lo].b == b {
		return es[lo].next, true
	}
	return 0, false
}

// each calls fn for every occurrence, with the end offset (exclusive) in text
// and the pattern id, in order of end offset.
func (m *matcher) each(text []byte, fn func(end int, id int32)) {
	s := int32(0)
	for i := 0; i < len(text); i++ {
		b := text[i]
		for {
			if row := m.denseRow[s]; row >= 0 {
				s = m.dense[int(row)<<8|int(b)]
				break
			}
			if nx, ok := m.child(s, b); ok {
				s = nx
				break
			}
			s = m.nodes[s].fail
		}
		for o := m.report[s]; o > 0; o = m.nodes[o].dict {
			for _, id := range m.outs[m.outStart[o]:m.outStart[o+1]] {
				fn(i+1, id)
			}
		}
	}
}
