package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runSnippet runs Lua code in the sandbox and returns its globals.
func runSnippet(t *testing.T, code string, lim Limits) (map[string]any, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plugin.lua")
	if err := os.WriteFile(p, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	return runLua(context.Background(), p, lim)
}

// TestPatternFunctionsFollowLua51 checks the sandbox's own pattern matcher
// against results of Lua 5.1's string library.
func TestPatternFunctionsFollowLua51(t *testing.T) {
	cases := []struct{ expr, want string }{
		{`string.find("hello world", "o w")`, "5,7"},
		{`string.find("hello", "l+")`, "3,4"},
		{`string.find("hello", "xyz")`, "nil"},
		{`string.find("a.b", ".", 1, true)`, "2,2"},
		{`string.find("abc", "b", -1)`, "nil"},
		{`string.find("abc", "", 10)`, "4,3"},
		{`string.match("key = value", "(%w+)%s*=%s*(%w+)")`, "key,value"},
		{`string.match("  trim me  ", "^%s*(.-)%s*$")`, "trim me"},
		{`string.match("THE (quick) fox", "%((%a+)%)")`, "quick"},
		{`string.match("f(a(b)c)d", "%b()")`, "(a(b)c)"},
		{`string.find("THE (quick) fox", "%f[%a]%a+", 5)`, "6,10"},
		{`string.match("hello", "()ll()")`, "3,5"},
		{`string.match("abab", "(ab)%1")`, "ab"},
		{`string.match("2024-01-02", "(%d+)-(%d+)-(%d+)")`, "2024,01,02"},
		{`string.find("abc", "[b-c]+")`, "2,3"},
		{`string.find("a]b", "[]]")`, "2,2"},
		{`string.find("a-b", "[a%-]+")`, "1,2"},
		{`string.match("hello", ".-(l+)")`, "ll"},
		{`string.match("x", "^(x?)(x?)$")`, "x,"},
		{`string.find("abc", "[^a]")`, "2,2"},
		{`string.match("A1 b2", "%u%d")`, "A1"},
		{`string.match("tab\there", "%S+$")`, "here"},
		{`string.gsub("hello world", "o", "0")`, "hell0 w0rld,2"},
		{`string.gsub("abc", "%w", "%0%0")`, "aabbcc,3"},
		{`string.gsub("hello world", "(%w+)", "<%1>")`, "<hello> <world>,2"},
		{`string.gsub("abc", "", "-")`, "-a-b-c-,4"},
		{`string.gsub("hello", "l", {l = "L"})`, "heLLo,2"},
		{`string.gsub("x=1, y=2", "(%w+)=(%w+)", function(k, v) return v .. "=" .. k end)`, "1=x, 2=y,2"},
		{`string.gsub("abc", "^a", "x")`, "xbc,1"},
		{`string.gsub("aaa", "a", "b", 2)`, "bba,2"},
		{`string.gsub("ab", "(b)", "pre%%mid%1post")`, "apre%midbpost,1"},
		{`string.gsub("ab", "b", "%0%0tail")`, "abbtail,1"},
		{`string.gsub("ab", "b", "x%")`, "ax,1"},
		{`string.gsub("abc", ".", {a = 1})`, "1bc,3"},
		{`string.gsub("50%", "%%", "%%%%")`, "50%%,1"},
	}
	var b strings.Builder
	b.WriteString("local function pack(...) local t = {} for i = 1, select('#', ...) do t[i] = tostring((select(i, ...))) end return table.concat(t, ',') end\n")
	for i, c := range cases {
		b.WriteString("R" + itoa(i) + " = pack(" + c.expr + ")\n")
	}
	b.WriteString("local words = {} for w in string.gmatch(\"one two  three\", \"%a+\") do words[#words+1] = w end\nGMATCH = table.concat(words, ',')\n")
	b.WriteString("local kv = {} for k, v in string.gmatch(\"a=1, b=2\", \"(%w+)=(%w+)\") do kv[#kv+1] = k .. v end\nGMATCH2 = table.concat(kv, ',')\n")
	g, err := runSnippet(t, b.String(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got := g["R"+itoa(i)]; got != c.want {
			t.Errorf("%s = %v, want %s", c.expr, got, c.want)
		}
	}
	if g["GMATCH"] != "one,two,three" || g["GMATCH2"] != "a1,b2" {
		t.Errorf("gmatch: %v %v", g["GMATCH"], g["GMATCH2"])
	}
	for _, bad := range []string{`string.find("a", "%")`, `string.find("a", "[a")`, `string.find("a", "(a")`, `string.match("a", "a)")`, `string.gsub("a", "(a)", "%2")`, `string.find("a", "%f")`, `string.gsub("abc", ".", {a = true})`} {
		if _, err := runSnippet(t, "x = "+bad+"\n", Limits{}); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i/10)) + string(rune('0'+i%10)))
}
