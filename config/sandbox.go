package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
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
	// StringBytes caps a string built by string.rep; 0 means 1 MiB.
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

// runLua runs the plugin file in a fresh sandbox and returns its globals as
// Go values. The Lua state is closed before it returns.
func runLua(ctx context.Context, path string, lim Limits) (map[string]any, error) {
	lim = lim.withDefaults()
	src, err := readCapped(path, lim.SourceBytes)
	if err != nil {
		return nil, err
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
	capRep(L, lim.StringBytes)
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
		fn, err := L.Load(strings.NewReader(string(b)), name+".lua")
		if err != nil {
			L.RaiseError("require(%q): %v", name, err)
		}
		L.Push(fn)
		L.Call(0, lua.MultRet)
		return L.GetTop() - 1
	}))

	runCtx, cancel := context.WithTimeout(ctx, lim.Time)
	defer cancel()
	memCtx, memCancel := context.WithCancelCause(runCtx)
	defer memCancel(nil)
	L.SetContext(memCtx)
	stop := watchMemory(memCancel, lim.Memory)
	defer stop()

	fn, err := L.Load(strings.NewReader(string(src)), "plugin.lua")
	if err != nil {
		return nil, err
	}
	L.Push(fn)
	err = L.PCall(0, lua.MultRet, nil)
	if cause := context.Cause(memCtx); cause != nil {
		switch {
		case errors.Is(cause, ErrMemoryLimit):
			return nil, ErrMemoryLimit
		case errors.Is(cause, context.DeadlineExceeded):
			return nil, ErrTimeLimit
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	L.G.Global.ForEach(func(k, v lua.LValue) {
		if ks, ok := k.(lua.LString); ok {
			if gv, ok := toGo(v, 0); ok {
				out[string(ks)] = gv
			}
		}
	})
	return out, nil
}

var moduleName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func validModuleName(s string) bool { return moduleName.MatchString(s) }

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

// capRep replaces string.rep with a version that refuses to build strings
// larger than max bytes, the quickest memory bomb a plugin could throw.
func capRep(L *lua.LState, max int) {
	str, ok := L.GetGlobal("string").(*lua.LTable)
	if !ok {
		return
	}
	str.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s := L.CheckString(1)
		n := L.CheckInt(2)
		sep := L.OptString(3, "")
		if n <= 0 {
			L.Push(lua.LString(""))
			return 1
		}
		if total := int64(n)*int64(len(s)) + int64(n-1)*int64(len(sep)); total > int64(max) {
			L.RaiseError("string.rep would build %d bytes; plugins may build at most %d", total, max)
		}
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(s)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
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
