package config

import (
	"context"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The Lua pattern functions of the sandbox (string.find, match, gmatch and
// gsub). gopher-lua's own matcher has no step or depth limit: a pattern
// such as string.rep("a?", 60)..string.rep("a", 60) backtracks for longer
// than the universe exists, a deep recursion overflows the Go stack and
// ends the process, and its gsub copies the whole subject once per match.
// This matcher follows Lua 5.1's lstrlib.c, counts its steps and checks the
// plugin's context every few thousand of them, limits its recursion depth
// as Lua 5.2 does, and builds gsub's result once, within the string budget.

const (
	patMaxCaptures = 32
	patMaxDepth    = 200 // MAXCCALLS of Lua 5.2's matcher
	patCheckEvery  = 1 << 12
	capUnfinished  = -1
	capPosition    = -2
)

type patCapture struct{ init, len int }

// patMatcher is one match attempt's state.
type patMatcher struct {
	L     *lua.LState
	ctx   context.Context
	src   string
	pat   string
	level int
	cap   [patMaxCaptures]patCapture
	depth int
	steps int
}

func (m *patMatcher) fail(format string, a ...any) {
	m.L.RaiseError(format, a...)
}

func (m *patMatcher) step() {
	m.steps++
	if m.steps%patCheckEvery == 0 && m.ctx != nil {
		if err := m.ctx.Err(); err != nil {
			m.fail("pattern matching stopped: %v", err)
		}
	}
}

func (m *patMatcher) classEnd(p int) int {
	if p >= len(m.pat) {
		m.fail("malformed pattern (ends with '%%')")
	}
	c := m.pat[p]
	p++
	switch c {
	case '%':
		if p >= len(m.pat) {
			m.fail("malformed pattern (ends with '%%')")
		}
		return p + 1
	case '[':
		if p < len(m.pat) && m.pat[p] == '^' {
			p++
		}
		for {
			// Look for a ']'; the first character may be one.
			if p >= len(m.pat) {
				m.fail("malformed pattern (missing ']')")
			}
			c := m.pat[p]
			p++
			if c == '%' && p < len(m.pat) {
				p++
			}
			if p < len(m.pat) && m.pat[p] == ']' {
				return p + 1
			}
			if p >= len(m.pat) {
				m.fail("malformed pattern (missing ']')")
			}
		}
	}
	return p
}

func isLuaPunct(c byte) bool {
	return c >= 33 && c <= 126 && !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')
}

func matchClass(c byte, cl byte) bool {
	var res bool
	lower := cl | 0x20
	switch lower {
	case 'a':
		res = (c|0x20) >= 'a' && (c|0x20) <= 'z'
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = c >= '0' && c <= '9'
	case 'l':
		res = c >= 'a' && c <= 'z'
	case 'p':
		res = isLuaPunct(c)
	case 's':
		res = c == ' ' || (c >= '\t' && c <= '\r')
	case 'u':
		res = c >= 'A' && c <= 'Z'
	case 'w':
		res = (c|0x20) >= 'a' && (c|0x20) <= 'z' || c >= '0' && c <= '9'
	case 'x':
		res = c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'f'
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if cl >= 'A' && cl <= 'Z' {
		return !res
	}
	return res
}

// matchBracketClass reports whether c is in the set from p ('[') to ec
// (its ']').
func (m *patMatcher) matchBracketClass(c byte, p, ec int) bool {
	sig := true
	if m.pat[p+1] == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case m.pat[p] == '%':
			p++
			if matchClass(c, m.pat[p]) {
				return sig
			}
		case p+2 < ec && m.pat[p+1] == '-':
			if m.pat[p] <= c && c <= m.pat[p+2] {
				return sig
			}
			p += 2
		case m.pat[p] == c:
			return sig
		}
	}
	return !sig
}

func (m *patMatcher) singleMatch(s, p, ep int) bool {
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, m.pat[p+1])
	case '[':
		return m.matchBracketClass(c, p, ep-1)
	}
	return m.pat[p] == c
}

// match returns the end of a match of pat[p:] at src[s:], or -1.
func (m *patMatcher) match(s, p int) int {
	m.depth++
	if m.depth > patMaxDepth {
		m.fail("pattern too complex (more than %d nested repetitions or captures)", patMaxDepth)
	}
	defer func() { m.depth-- }()
	for {
		m.step()
		if p == len(m.pat) {
			return s
		}
		switch m.pat[p] {
		case '(':
			if p+1 < len(m.pat) && m.pat[p+1] == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(m.pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 < len(m.pat) {
				switch c := m.pat[p+1]; {
				case c == 'b':
					s = m.matchBalance(s, p+2)
					if s == -1 {
						return -1
					}
					p += 4
					continue
				case c == 'f':
					p += 2
					if p >= len(m.pat) || m.pat[p] != '[' {
						m.fail("missing '[' after '%%f' in pattern")
					}
					ep := m.classEnd(p)
					var prev, cur byte
					if s > 0 {
						prev = m.src[s-1]
					}
					if s < len(m.src) {
						cur = m.src[s]
					}
					if !m.matchBracketClass(prev, p, ep-1) && m.matchBracketClass(cur, p, ep-1) {
						p = ep
						continue
					}
					return -1
				case c >= '0' && c <= '9':
					s = m.matchCapture(s, c)
					if s == -1 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		ep := m.classEnd(p)
		ok := m.singleMatch(s, p, ep)
		if ep < len(m.pat) {
			switch m.pat[ep] {
			case '?':
				if ok {
					if r := m.match(s+1, ep+1); r != -1 {
						return r
					}
				}
				p = ep + 1
				continue
			case '*':
				return m.maxExpand(s, p, ep)
			case '+':
				if !ok {
					return -1
				}
				return m.maxExpand(s+1, p, ep)
			case '-':
				return m.minExpand(s, p, ep)
			}
		}
		if !ok {
			return -1
		}
		s++
		p = ep
	}
}

func (m *patMatcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.singleMatch(s+i, p, ep) {
		m.step()
		i++
	}
	for ; i >= 0; i-- {
		if r := m.match(s+i, ep+1); r != -1 {
			return r
		}
	}
	return -1
}

func (m *patMatcher) minExpand(s, p, ep int) int {
	for {
		if r := m.match(s, ep+1); r != -1 {
			return r
		}
		if !m.singleMatch(s, p, ep) {
			return -1
		}
		s++
	}
}

func (m *patMatcher) startCapture(s, p, what int) int {
	if m.level >= patMaxCaptures {
		m.fail("too many captures")
	}
	m.cap[m.level] = patCapture{init: s, len: what}
	m.level++
	r := m.match(s, p)
	if r == -1 {
		m.level--
	}
	return r
}

func (m *patMatcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.cap[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.fail("invalid pattern capture")
	}
	m.cap[l].len = s - m.cap[l].init
	r := m.match(s, p)
	if r == -1 {
		m.cap[l].len = capUnfinished
	}
	return r
}

func (m *patMatcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.fail("unbalanced pattern (%%b needs two characters)")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	b, e := m.pat[p], m.pat[p+1]
	cont := 1
	for s++; s < len(m.src); s++ {
		m.step()
		switch m.src[s] {
		case e:
			cont--
			if cont == 0 {
				return s + 1
			}
		case b:
			cont++
		}
	}
	return -1
}

func (m *patMatcher) matchCapture(s int, c byte) int {
	l := int(c - '1')
	if l < 0 || l >= m.level || m.cap[l].len == capUnfinished {
		m.fail("invalid capture index %%%c", c)
	}
	n := m.cap[l].len
	if n < 0 {
		n = 0 // a position capture matches the empty string
	}
	if len(m.src)-s >= n && m.src[m.cap[l].init:m.cap[l].init+n] == m.src[s:s+n] {
		return s + n
	}
	return -1
}

// capture returns capture i of the match src[s:e] as a Lua value.
func (m *patMatcher) capture(i, s, e int) lua.LValue {
	if i >= m.level {
		if i == 0 {
			return lua.LString(m.src[s:e])
		}
		m.fail("invalid capture index %%%d", i+1)
	}
	c := m.cap[i]
	switch c.len {
	case capUnfinished:
		m.fail("unfinished capture")
	case capPosition:
		return lua.LNumber(c.init + 1)
	}
	return lua.LString(m.src[c.init : c.init+c.len])
}

// pushCaptures pushes the captures of a match (or the whole match when the
// pattern has none) and returns how many.
func (m *patMatcher) pushCaptures(s, e int, wholeIfNone bool) int {
	n := m.level
	if n == 0 && wholeIfNone {
		n = 1
	}
	for i := 0; i < n; i++ {
		m.L.Push(m.capture(i, s, e))
	}
	return n
}

const patSpecials = "^$*+?.([%-"

// patternLib replaces find, match, gmatch and gsub in the string table.
func patternLib(L *lua.LState, ctx context.Context, maxBytes int) {
	str, ok := L.GetGlobal("string").(*lua.LTable)
	if !ok {
		return
	}
	newMatcher := func(L *lua.LState, src, pat string) *patMatcher {
		return &patMatcher{L: L, ctx: ctx, src: src, pat: pat}
	}
	findAux := func(L *lua.LState, find bool) int {
		src := L.CheckString(1)
		pat := L.CheckString(2)
		init := L.OptInt(3, 1)
		if init < 0 {
			init = len(src) + init + 1
		}
		init--
		if init < 0 {
			init = 0
		} else if init > len(src) {
			init = len(src)
		}
		if find && (L.ToBool(4) || !strings.ContainsAny(pat, patSpecials)) {
			if i := strings.Index(src[init:], pat); i >= 0 {
				L.Push(lua.LNumber(init + i + 1))
				L.Push(lua.LNumber(init + i + len(pat)))
				return 2
			}
			L.Push(lua.LNil)
			return 1
		}
		m := newMatcher(L, src, pat)
		p, anchor := 0, len(pat) > 0 && pat[0] == '^'
		if anchor {
			p = 1
		}
		for s := init; ; s++ {
			m.level = 0
			if e := m.match(s, p); e != -1 {
				if find {
					L.Push(lua.LNumber(s + 1))
					L.Push(lua.LNumber(e))
					return m.pushCaptures(s, e, false) + 2
				}
				return m.pushCaptures(s, e, true)
			}
			if s >= len(src) || anchor {
				break
			}
		}
		L.Push(lua.LNil)
		return 1
	}
	str.RawSetString("find", L.NewFunction(func(L *lua.LState) int { return findAux(L, true) }))
	str.RawSetString("match", L.NewFunction(func(L *lua.LState) int { return findAux(L, false) }))
	str.RawSetString("gmatch", L.NewFunction(func(L *lua.LState) int {
		src := L.CheckString(1)
		pat := L.CheckString(2)
		pos := 0
		L.Push(L.NewFunction(func(L *lua.LState) int {
			m := newMatcher(L, src, pat)
			for s := pos; s <= len(src); s++ {
				m.level = 0
				if e := m.match(s, 0); e != -1 {
					pos = e
					if e == s {
						pos++
					}
					return m.pushCaptures(s, e, true)
				}
			}
			pos = len(src) + 1
			return 0
		}))
		return 1
	}))
	str.RawSetString("gsub", L.NewFunction(func(L *lua.LState) int {
		src := L.CheckString(1)
		pat := L.CheckString(2)
		L.CheckTypes(3, lua.LTNumber, lua.LTString, lua.LTTable, lua.LTFunction)
		repl := L.Get(3)
		maxN := L.OptInt(4, len(src)+1)
		m := newMatcher(L, src, pat)
		p, anchor := 0, len(pat) > 0 && pat[0] == '^'
		if anchor {
			p = 1
		}
		var b strings.Builder
		add := func(s string) {
			if b.Len()+len(s) > maxBytes {
				L.RaiseError("string.gsub would build more than %d bytes; plugins may build at most %d", maxBytes, maxBytes)
			}
			b.WriteString(s)
		}
		n := 0
		s := 0
		for n < maxN {
			m.level = 0
			e := m.match(s, p)
			if e != -1 {
				n++
				add(m.replacement(repl, s, e))
			}
			switch {
			case e != -1 && e > s:
				s = e
			case s < len(src):
				add(src[s : s+1])
				s++
			default:
				goto done
			}
			if anchor {
				break
			}
		}
	done:
		if s < len(src) {
			add(src[s:])
		}
		L.Push(lua.LString(b.String()))
		L.Push(lua.LNumber(n))
		return 2
	}))
}

// replacement is what gsub puts in place of the match src[s:e].
func (m *patMatcher) replacement(repl lua.LValue, s, e int) string {
	L := m.L
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		news := r.String()
		if strings.IndexByte(news, '%') < 0 {
			return news
		}
		var b strings.Builder
		for i := 0; i < len(news); i++ {
			// Copy the run up to the next '%' at once: a replacement of
			// a megabyte must not cost a loop step per byte.
			if j := strings.IndexByte(news[i:], '%'); j != 0 {
				if j < 0 {
					b.WriteString(news[i:])
					break
				}
				b.WriteString(news[i : i+j])
				i += j
			}
			i++
			if i >= len(news) {
				break
			}
			d := news[i]
			switch {
			case d < '0' || d > '9':
				b.WriteByte(d)
			case d == '0':
				b.WriteString(m.src[s:e])
			default:
				cv := m.capture(int(d-'1'), s, e)
				b.WriteString(cv.String())
			}
		}
		return b.String()
	case *lua.LTable:
		v = L.GetTable(r, m.capture(0, s, e))
	case *lua.LFunction:
		top := L.GetTop()
		L.Push(r)
		n := m.pushCaptures(s, e, true)
		L.Call(n, 1)
		v = L.Get(-1)
		L.SetTop(top)
	}
	switch x := v.(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return strconv.FormatFloat(float64(x), 'g', 14, 64)
	}
	if v == lua.LNil || v == lua.LFalse {
		return m.src[s:e]
	}
	L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	return ""
}
