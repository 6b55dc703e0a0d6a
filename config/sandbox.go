package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// Limits bound what one plugin may use.
type Limits struct {
	// Time is the wall-clock limit for running a plugin; 0 means 2s.
	Time time.Duration
	// Memory is how much the Go heap may grow while a plugin runs; 0 means
	// 256 MiB.
	Memory uint64
	// SourceBytes caps the size of plugin.lua and each required file; 0
	// means 1 MiB.
	SourceBytes int64
	// StringBytes caps a string built by a library function (string.rep,
	// string.gsub, table.concat); 0 means 1 MiB.
	StringBytes int
}

func (l Limits) withDefaults() Limits {
	if l.Time <= 0 {
		l.Time = 2 * time.Second
	}
	if l.Memory == 0 {
		l.Memory = 256 << 20
	}
	if l.SourceBytes <= 0 {
		l.SourceBytes = 1 << 20
	}
	if l.StringBytes <= 0 {
		l.StringBytes = 1 << 20
	}
	return l
}

// ErrTimeLimit and ErrMemoryLimit end a plugin that ran too long or grew too
// large.
var (
	ErrTimeLimit   = errors.New("the plugin ran longer than its time limit (an endless loop?)")
	ErrMemoryLimit = errors.New("the plugin used more memory than its limit")
)

// maxResults caps how many values unpack and string.byte may return at
// once, as LUAI_MAXCSTACK does in Lua 5.1; gopher-lua would otherwise push
// them one by one until its registry overflows, which takes most of a
// minute for unpack({}, 1, 1e8).
const maxResults = 8000

// maxSyntaxDepth caps how deeply a plugin's syntax may nest, as Lua 5.1's
// parser does (LUAI_MAXCCALLS): gopher-lua's compiler takes time quadratic
// in the length of a chain such as "a" .. "a" .. ... and would spend half a
// minute on 200,000 of them before running a single instruction.
const maxSyntaxDepth = 200

// runLua runs the plugin file in a fresh sandbox and returns its globals as
// Go values. The Lua state is closed before it returns.
//
// Every part of the run is bounded: the compiler by the syntax depth, the
// virtual machine by the context (checked before each instruction), and
// the library functions that can run long or build large values (pattern
// matching, rep, gsub, format, table.concat, unpack, string.byte) by step
// counts that check the same context and by size budgets checked before
// anything is allocated. A watchdog ends the run when the Go heap grows by
// more than the memory limit. A single instruction of the virtual machine
// can still allocate more than that (a concatenation of many large
// strings) before the watchdog sees it; ChildProcess isolation bounds that
// too.
func runLua(ctx context.Context, path string, lim Limits) (map[string]any, error) {
	lim = lim.withDefaults()
	src, err := readCapped(path, lim.SourceBytes)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, lim.Time)
	defer cancel()
	memCtx, memCancel := context.WithCancelCause(runCtx)
	defer memCancel(nil)
	stop := watchMemory(memCancel, lim.Memory)
	defer stop()
	limitErr := func(err error) error {
		if cause := context.Cause(memCtx); cause != nil {
			switch {
			case errors.Is(cause, ErrMemoryLimit):
				return ErrMemoryLimit
			case errors.Is(cause, context.DeadlineExceeded):
				return ErrTimeLimit
			case ctx.Err() != nil:
				return ctx.Err()
			}
		}
		return err
	}

	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 200, RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 256})
	defer L.Close()
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range []string{"dofile", "loadfile", "load", "loadstring", "module", "collectgarbage", "getfenv", "setfenv", "rawset", "rawget", "rawequal", "newproxy", "_printregs", "print"} {
		L.SetGlobal(name, lua.LNil)
	}
	boundLibrary(L, memCtx, lim.StringBytes)
	dir := filepath.Dir(path)
	loaded := map[string]bool{}
	L.SetGlobal("require", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		if !validModuleName(name) {
			L.RaiseError("require(%q): only files next to plugin.lua may be required, by a plain name such as \"icon\"", name)
		}
		if loaded[name] {
			return 0
		}
		p := filepath.Join(dir, name+".lua")
		b, err := readCapped(p, lim.SourceBytes)
		if err != nil {
			L.RaiseError("require(%q): %v", name, err)
		}
		loaded[name] = true
		fn, err := compileBounded(L, b, name+".lua")
		if err != nil {
			L.RaiseError("require(%q): %v", name, err)
		}
		L.Push(fn)
		L.Call(0, lua.MultRet)
		return L.GetTop() - 1
	}))
	L.SetContext(memCtx)
	// What the sandbox itself put into the globals (the libraries, _G) is
	// not the plugin's configuration and is not converted.
	builtin := map[lua.LValue]lua.LValue{}
	L.G.Global.ForEach(func(k, v lua.LValue) { builtin[k] = v })

	fn, err := compileBounded(L, src, "plugin.lua")
	if err != nil {
		return nil, limitErr(err)
	}
	L.Push(fn)
	// With a message handler, gopher-lua does not build a traceback; a
	// tail-call loop stopped by the time limit would otherwise spend
	// seconds and gigabytes listing every tail call.
	err = L.PCall(0, lua.MultRet, L.NewFunction(keepMessage))
	if err = limitErr(err); err != nil {
		return nil, err
	}
	out := map[string]any{}
	L.G.Global.ForEach(func(k, v lua.LValue) {
		if b, ok := builtin[k]; ok && b == v {
			return
		}
		if ks, ok := k.(lua.LString); ok {
			if gv, ok := toGo(v, 0); ok {
				out[string(ks)] = gv
			}
		}
	})
	return out, nil
}

// keepMessage is a message handler that returns the error as it is.
func keepMessage(L *lua.LState) int {
	L.Push(L.Get(1))
	return 1
}

// compileBounded parses and compiles a chunk, refusing syntax nested deeper
// than maxSyntaxDepth before the compiler sees it.
func compileBounded(L *lua.LState, src []byte, name string) (*lua.LFunction, error) {
	// The parser checks no context; its work is bounded by the size of the
	// source (at most a few seconds for a megabyte of the worst input), so
	// when the plugin's time is up it is left to finish on its own.
	type parsed struct {
		chunk []ast.Stmt
		err   error
	}
	done := make(chan parsed, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- parsed{err: fmt.Errorf("%s: the parser failed: %v", name, r)}
			}
		}()
		chunk, err := parse.Parse(bytes.NewReader(src), name)
		done <- parsed{chunk, err}
	}()
	var chunk []ast.Stmt
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		chunk = r.chunk
	case <-L.Context().Done():
		return nil, L.Context().Err()
	}
	if line, deep := tooDeep(chunk, maxSyntaxDepth); deep {
		return nil, fmt.Errorf("%s line:%d: the code is nested more than %d levels deep (a chain of operators such as .. counts one level per operator); split it into steps", name, line, maxSyntaxDepth)
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, err
	}
	return L.NewFunctionFromProto(proto), nil
}

var (
	exprType = reflect.TypeFor[ast.Expr]()
	stmtType = reflect.TypeFor[ast.Stmt]()
)

// tooDeep reports whether the syntax tree nests more than max expressions
// or statements, and the line where it does. It walks the tree without
// recursion, so a deep tree costs no Go stack.
func tooDeep(chunk []ast.Stmt, max int) (line int, deep bool) {
	type item struct {
		v     reflect.Value
		depth int
	}
	stack := []item{{reflect.ValueOf(chunk), 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		v, depth := it.v, it.depth
		switch v.Kind() {
		case reflect.Interface:
			if v.IsNil() {
				continue
			}
			if v.Type() == exprType || v.Type() == stmtType {
				depth++
				if depth > max {
					if n, ok := v.Interface().(interface{ Line() int }); ok {
						line = n.Line()
					}
					return line, true
				}
			}
			stack = append(stack, item{v.Elem(), depth})
		case reflect.Pointer:
			if !v.IsNil() {
				stack = append(stack, item{v.Elem(), depth})
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if f := v.Field(i); v.Type().Field(i).IsExported() {
					stack = append(stack, item{f, depth})
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				stack = append(stack, item{v.Index(i), depth})
			}
		}
	}
	return 0, false
}

var moduleName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

func validModuleName(s string) bool { return moduleName().MatchString(s) }

func readCapped(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d bytes a plugin file may have", filepath.Base(path), fi.Size(), max)
	}
	return os.ReadFile(path)
}

// boundLibrary replaces the library functions whose work or result a
// plugin could make unbounded with versions that check their size before
// they allocate and the context while they run: max caps every string they
// build.
func boundLibrary(L *lua.LState, ctx context.Context, max int) {
	str, ok := L.GetGlobal("string").(*lua.LTable)
	if !ok {
		return
	}
	tooLarge := func(L *lua.LState, fn string, n uint64) {
		L.RaiseError("%s would build %d bytes; plugins may build at most %d", fn, n, max)
	}
	str.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s := L.CheckString(1)
		n := L.CheckNumber(2)
		sep := L.OptString(3, "")
		if n < 1 || math.IsNaN(float64(n)) {
			L.Push(lua.LString(""))
			return 1
		}
		// Computed in float64 first: n may be 2^62 or more, and the
		// product in integers would overflow to a small number.
		if total := float64(n)*float64(len(s)) + (float64(n)-1)*float64(len(sep)); total > float64(max) {
			if total > math.MaxUint64 {
				total = math.MaxUint64
			}
			tooLarge(L, "string.rep", uint64(total))
		}
		count := int(n)
		var b strings.Builder
		b.Grow(count*len(s) + (count-1)*len(sep))
		for i := 0; i < count; i++ {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(s)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
	if f, ok := str.RawGetString("format").(*lua.LFunction); ok && f.GFunction != nil {
		format := f.GFunction
		str.RawSetString("format", L.NewFunction(func(L *lua.LState) int {
			checkFormatWidths(L, L.CheckString(1))
			return format(L)
		}))
	}
	if f, ok := str.RawGetString("byte").(*lua.LFunction); ok && f.GFunction != nil {
		byteFn := f.GFunction
		str.RawSetString("byte", L.NewFunction(func(L *lua.LState) int {
			s := L.CheckString(1)
			i, j := luaRange(len(s), L.OptInt(2, 1), L.OptInt(3, L.OptInt(2, 1)))
			if j-i+1 > maxResults {
				L.RaiseError("string.byte would return %d values; at most %d at once", j-i+1, maxResults)
			}
			return byteFn(L)
		}))
	}
	patternLib(L, ctx, max)
	if tbl, ok := L.GetGlobal("table").(*lua.LTable); ok {
		tbl.RawSetString("concat", L.NewFunction(func(L *lua.LState) int {
			t := L.CheckTable(1)
			sep := L.OptString(2, "")
			i := L.OptInt(3, 1)
			j := L.OptInt(4, t.Len())
			if i > j {
				L.Push(lua.LString(""))
				return 1
			}
			// Size first, so that a table holding one large string a
			// million times is refused before anything is copied.
			var total uint64
			for k := i; k <= j; k++ {
				v := t.RawGetInt(k)
				switch v.(type) {
				case lua.LString, lua.LNumber:
				default:
					L.RaiseError("invalid value (a %s) at index %d in table for concat", v.Type().String(), k)
				}
				total += uint64(len(v.String()))
				if k < j {
					total += uint64(len(sep))
				}
				if total > uint64(max) {
					tooLarge(L, "table.concat", total)
				}
				if (k-i)%patCheckEvery == 0 && ctx.Err() != nil {
					L.RaiseError("table.concat stopped: %v", ctx.Err())
				}
			}
			var b strings.Builder
			b.Grow(int(total))
			for k := i; k <= j; k++ {
				b.WriteString(t.RawGetInt(k).String())
				if k < j {
					b.WriteString(sep)
				}
			}
			L.Push(lua.LString(b.String()))
			return 1
		}))
	}
	L.SetGlobal("unpack", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		i := L.OptInt(2, 1)
		j := L.OptInt(3, t.Len())
		if i > j {
			return 0
		}
		if n := int64(j) - int64(i) + 1; n > maxResults {
			L.RaiseError("too many results to unpack (%d; at most %d)", n, maxResults)
		}
		for k := i; k <= j; k++ {
			L.Push(t.RawGetInt(k))
		}
		return j - i + 1
	}))
	// pcall and xpcall without tracebacks (see runLua).
	L.SetGlobal("pcall", L.NewFunction(func(L *lua.LState) int {
		L.CheckAny(1)
		nargs := L.GetTop() - 1
		if err := L.PCall(nargs, lua.MultRet, L.NewFunction(keepMessage)); err != nil {
			L.Push(lua.LFalse)
			L.Push(errObject(err))
			return 2
		}
		L.Insert(lua.LTrue, 1)
		return L.GetTop()
	}))
	L.SetGlobal("xpcall", L.NewFunction(func(L *lua.LState) int {
		fn := L.CheckFunction(1)
		handler := L.CheckFunction(2)
		L.SetTop(0)
		L.Push(fn)
		safeHandler := L.NewFunction(func(L *lua.LState) int {
			msg := L.Get(1)
			L.SetTop(0)
			L.Push(handler)
			L.Push(msg)
			if err := L.PCall(1, 1, L.NewFunction(keepMessage)); err != nil {
				L.Push(errObject(err))
			}
			return 1
		})
		if err := L.PCall(0, lua.MultRet, safeHandler); err != nil {
			L.Push(lua.LFalse)
			L.Push(errObject(err))
			return 2
		}
		L.Insert(lua.LTrue, 1)
		return L.GetTop()
	}))
}

func errObject(err error) lua.LValue {
	if aerr, ok := err.(*lua.ApiError); ok {
		return aerr.Object
	}
	return lua.LString(err.Error())
}

// luaRange turns Lua's string positions (1-based, negative from the end)
// into a clamped 1-based range.
func luaRange(n, i, j int) (int, int) {
	if i < 0 {
		i = n + i + 1
	}
	if j < 0 {
		j = n + j + 1
	}
	if i < 1 {
		i = 1
	}
	if j > n {
		j = n
	}
	return i, j
}

// checkFormatWidths refuses widths and precisions of more than two digits,
// as Lua 5.1 does; Go's fmt would pad to a million characters per item.
func checkFormatWidths(L *lua.LState, f string) {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		digits := 0
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			i++
			digits++
		}
		if i < len(f) && f[i] == '.' {
			i++
			p := 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
				p++
			}
			digits = max(digits, p)
		}
		if digits > 2 {
			L.RaiseError("invalid format (width or precision too long)")
		}
	}
}

// watchMemory cancels the plugin when the Go heap grows by more than limit
// while it runs. gopher-lua has no allocator hook, so a watchdog is the way
// to end a table or concatenation bomb before it takes the machine.
func watchMemory(cancel context.CancelCauseFunc, limit uint64) (stop func()) {
	read := func() uint64 {
		// ReadMemStats stops the world briefly; it runs only while a
		// plugin runs, every few milliseconds, and is exact where the
		// runtime/metrics heap figures lag behind large allocations.
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := read()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if cur := read(); cur > base && cur-base > limit {
					cancel(ErrMemoryLimit)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// toGo converts a Lua value into string, float64, bool, map[string]any or
// []any (a table whose keys are 1..n). Functions and userdata are dropped.
func toGo(v lua.LValue, depth int) (any, bool) {
	if depth > 32 {
		return nil, false
	}
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return float64(x), true
	case lua.LBool:
		return bool(x), true
	case *lua.LTable:
		n := x.Len()
		isList := n > 0
		count := 0
		x.ForEach(func(k, _ lua.LValue) {
			count++
			if kn, ok := k.(lua.LNumber); !ok || float64(kn) != float64(int(kn)) || int(kn) < 1 || int(kn) > n {
				isList = false
			}
		})
		if isList && count == n {
			out := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				if gv, ok := toGo(x.RawGetInt(i), depth+1); ok {
					out = append(out, gv)
				}
			}
			return out, true
		}
		out := map[string]any{}
		x.ForEach(func(k, val lua.LValue) {
			var key string
			switch kk := k.(type) {
			case lua.LString:
				key = string(kk)
			case lua.LNumber:
				key = kk.String()
			default:
				return
			}
			if gv, ok := toGo(val, depth+1); ok {
				out[key] = gv
			}
		})
		return out, true
	}
	return nil, false
}
