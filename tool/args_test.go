package tool

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/textcut"
)

func mustArgs(t *testing.T, raw string) *Args {
	t.Helper()
	a, err := ReadArgs(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("ReadArgs(%s): %v", raw, err)
	}
	return a
}

// wantRefusal checks that err refuses the argument name, and that the
// message contains every part of want.
func wantRefusal(t *testing.T, err error, name string, want ...string) {
	t.Helper()
	ae, ok := AsArgumentError(err)
	if !ok {
		t.Fatalf("err = %v, want an *ArgumentError", err)
	}
	if ae.Argument != name {
		t.Errorf("refusal names argument %q, want %q", ae.Argument, name)
	}
	if !strings.Contains(ae.Message, "'"+name+"'") {
		t.Errorf("message %q does not name the argument", ae.Message)
	}
	for _, w := range want {
		if !strings.Contains(ae.Message, w) {
			t.Errorf("message %q lacks %q", ae.Message, w)
		}
	}
}

func TestReadArgsShape(t *testing.T) {
	tests := []struct {
		raw     string
		wantErr string
		names   []string
	}{
		{"", "", nil},
		{"  ", "", nil},
		{"null", "", nil},
		{"{}", "", nil},
		{`{"a":1,"b":null}`, "", []string{"a", "b"}},
		{`[]`, "must be a JSON object", nil},
		{`"text"`, "must be a JSON object", nil},
		{`{"a":1`, "not valid JSON", nil},
		{`{"a":1} {}`, "more followed", nil},
		{`{"a":1,"a":2}`, "'a' was given more than once", nil},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			a, err := ReadArgs(json.RawMessage(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Names(); !reflect.DeepEqual(got, tc.names) {
				t.Errorf("names = %v, want %v", got, tc.names)
			}
		})
	}
}

// "A placeholder such as 0 is not a page, and reading it as 'no page' does
// something the model did not ask for."
func TestPlaceholdersAreRefused(t *testing.T) {
	a := mustArgs(t, `{"page":0,"language":"","ids":[],"limit":-3}`)
	_, _, err := a.OptionalPositiveInt("page", "to get the first page")
	wantRefusal(t, err, "page", "a positive integer", "but was 0", "Leave it out to get the first page.")
	_, _, err = a.OptionalString("language", StringRule{}, "")
	wantRefusal(t, err, "language", "a non-empty string", `but was ""`, "Leaving it out is always possible.")
	_, _, err = a.OptionalStrings("ids", StringRule{}, "to search every data source")
	wantRefusal(t, err, "ids", "must not be an empty list", "Leave it out to search every data source.")
	_, _, err = a.OptionalPositiveInt("limit", "")
	wantRefusal(t, err, "limit", "but was -3")
}

// "null is treated as absent."
func TestNullIsAbsent(t *testing.T) {
	a := mustArgs(t, `{"q":null,"n":null,"b":null,"d":null,"c":null,"l":null,"page":null}`)
	if _, ok, err := a.OptionalString("q", StringRule{}, ""); ok || err != nil {
		t.Errorf("string: ok=%v err=%v", ok, err)
	}
	if _, ok, err := a.OptionalPositiveInt("n", ""); ok || err != nil {
		t.Errorf("int: ok=%v err=%v", ok, err)
	}
	if _, ok, err := a.OptionalBool("b", ""); ok || err != nil {
		t.Errorf("bool: ok=%v err=%v", ok, err)
	}
	if _, ok, err := a.OptionalDate("d", nil, ""); ok || err != nil {
		t.Errorf("date: ok=%v err=%v", ok, err)
	}
	if _, ok, err := a.OptionalChoice("c", []string{"x"}, ""); ok || err != nil {
		t.Errorf("choice: ok=%v err=%v", ok, err)
	}
	if _, ok, err := a.OptionalChoices("l", []string{"x"}, ""); ok || err != nil {
		t.Errorf("choices: ok=%v err=%v", ok, err)
	}
	if p, err := a.Page(3); p != 1 || err != nil {
		t.Errorf("page = %d, %v; want 1", p, err)
	}
	if a.Has("q") {
		t.Error("Has reports a null argument")
	}
	_, err := a.RequiredString("q", StringRule{})
	wantRefusal(t, err, "q", "required but missing", "a non-empty string")
}

func TestStrings(t *testing.T) {
	tests := []struct {
		raw     string
		rule    StringRule
		want    string
		refusal []string
	}{
		{`"  Größe  "`, StringRule{}, "Größe", nil},
		{`"a\nb"`, StringRule{}, "a\nb", nil},
		{`"a\nb"`, StringRule{SingleLine: true}, "", []string{"single line"}},
		{`"a\u2028b"`, StringRule{SingleLine: true}, "", []string{"single line"}},
		{`"a\tb"`, StringRule{SingleLine: true}, "", []string{"control characters"}},
		{`"ääää"`, StringRule{MaxChars: 4}, "ääää", nil},
		{`"äääää"`, StringRule{MaxChars: 4}, "", []string{"at most 4 characters", "had 5"}},
		{`"   "`, StringRule{}, "", []string{"a non-empty string", `but was "   "`}},
		{`5`, StringRule{}, "", []string{"a non-empty string", "but was 5"}},
		{`["a"]`, StringRule{}, "", []string{`but was ["a"]`}},
		{`{"x": 1}`, StringRule{}, "", []string{`but was {"x":1}`}},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			a := mustArgs(t, `{"q":`+tc.raw+`}`)
			got, err := a.RequiredString("q", tc.rule)
			if tc.refusal != nil {
				wantRefusal(t, err, "q", tc.refusal...)
				// A required argument never says it may be left out.
				if strings.Contains(err.Error(), "Leav") {
					t.Errorf("required refusal offers leaving it out: %v", err)
				}
				_, _, err = a.OptionalString("q", tc.rule, "to search everything")
				wantRefusal(t, err, "q", append(tc.refusal, "Leave it out to search everything.")...)
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestPositiveIntegers(t *testing.T) {
	tests := []struct {
		raw  string
		want int
		ok   bool
	}{
		{"1", 1, true},
		{"2147483647", 2147483647, true},
		{"2147483648", 0, false},
		{"0", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"2.0", 0, false},
		{"1e2", 0, false},
		{`"3"`, 0, false},
		{"true", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			a := mustArgs(t, `{"n":`+tc.raw+`}`)
			got, err := a.RequiredPositiveInt("n")
			if !tc.ok {
				wantRefusal(t, err, "n", "must be a positive integer", "but was "+tc.raw)
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// "Only JSON booleans are accepted."
func TestBooleans(t *testing.T) {
	for raw, want := range map[string]bool{"true": true, "false": false} {
		a := mustArgs(t, `{"b":`+raw+`}`)
		if got, err := a.RequiredBool("b"); err != nil || got != want {
			t.Errorf("%s: got %v, %v", raw, got, err)
		}
	}
	for _, raw := range []string{`"true"`, `1`, `0`, `"yes"`} {
		a := mustArgs(t, `{"b":`+raw+`}`)
		_, _, err := a.OptionalBool("b", "to include every mail")
		wantRefusal(t, err, "b", "true or false", "but was "+raw, "Leave it out to include every mail.")
	}
}

func TestDates(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		berlin = time.FixedZone("CET", 3600)
	}
	tests := []struct {
		raw      string
		want     time.Time
		timeOfDa bool
		ok       bool
	}{
		// A bare date is the start of that day in the user's time zone.
		{`"2026-09-01"`, time.Date(2026, 9, 1, 0, 0, 0, 0, berlin), false, true},
		// Without an offset, the user's time zone applies.
		{`"2026-09-01T14:30"`, time.Date(2026, 9, 1, 14, 30, 0, 0, berlin), true, true},
		{`"2026-09-01 14:30:15"`, time.Date(2026, 9, 1, 14, 30, 15, 0, berlin), true, true},
		{`"2026-09-01T14:30:15.5"`, time.Date(2026, 9, 1, 14, 30, 15, 500000000, berlin), true, true},
		// A stated offset is kept; Z means UTC.
		{`"2026-09-01T14:30Z"`, time.Date(2026, 9, 1, 14, 30, 0, 0, time.UTC), true, true},
		{`"2026-09-01T14:30:00+05:30"`, time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC), true, true},
		// Anything else is refused.
		{`"2026-9-1"`, time.Time{}, false, false},
		{`"01.09.2026"`, time.Time{}, false, false},
		{`"2026-02-30"`, time.Time{}, false, false},
		{`"2026-09-01T25:00"`, time.Time{}, false, false},
		{`"tomorrow"`, time.Time{}, false, false},
		{`"2026-09-01Z"`, time.Time{}, false, false},
		{`20260901`, time.Time{}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			a := mustArgs(t, `{"after":`+tc.raw+`}`)
			got, ok, err := a.OptionalDate("after", berlin, "to search mails of any date")
			if !tc.ok {
				wantRefusal(t, err, "after", "a date such as 2026-09-01", "2026-09-01T14:30", "but was "+tc.raw, "Leave it out to search mails of any date.")
				return
			}
			if err != nil || !ok {
				t.Fatalf("err = %v, ok = %v", err, ok)
			}
			if !got.Time.Equal(tc.want) || got.HasTimeOfDay != tc.timeOfDa {
				t.Errorf("got %v (time of day %v), want %v (%v)", got.Time, got.HasTimeOfDay, tc.want, tc.timeOfDa)
			}
		})
	}
	// Without a location, UTC applies.
	d, err := mustArgs(t, `{"d":"2026-09-01"}`).RequiredDate("d", nil)
	if err != nil || !d.Time.Equal(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("nil location: %v, %v", d.Time, err)
	}
}

// "Choices compare exactly after trimming."
func TestChoices(t *testing.T) {
	choices := []string{"day", "week"}
	a := mustArgs(t, `{"r":" week ","s":"Week","t":3}`)
	if got, err := a.RequiredChoice("r", choices); err != nil || got != "week" {
		t.Errorf("got %q, %v", got, err)
	}
	_, err := a.RequiredChoice("s", choices)
	wantRefusal(t, err, "s", "must be one of day, week", `but was "Week"`)
	_, _, err = a.OptionalChoice("t", choices, "for every time")
	wantRefusal(t, err, "t", "one of day, week", "but was 3", "Leave it out for every time.")
	_, err = a.RequiredChoice("missing", choices)
	wantRefusal(t, err, "missing", "required but missing", "one of day, week")
}

// "An empty list is refused; duplicates are removed, keeping the first."
func TestLists(t *testing.T) {
	choices := []string{"a", "b", "c"}
	tests := []struct {
		raw     string
		want    []string
		refusal []string
	}{
		{`["b"," a ","b","c","a"]`, []string{"b", "a", "c"}, nil},
		{`[]`, nil, []string{"must not be an empty list", "a list of one or more of a, b, c"}},
		{`"a"`, nil, []string{"must be a list of one or more of a, b, c", `but was "a"`}},
		{`["a","d"]`, nil, []string{"Every value of argument 'ids' must be one of a, b, c", `but one was "d"`}},
		{`["a",null]`, nil, []string{"Every value", "but one was null"}},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			a := mustArgs(t, `{"ids":`+tc.raw+`}`)
			got, err := a.RequiredChoices("ids", choices)
			if tc.refusal != nil {
				wantRefusal(t, err, "ids", tc.refusal...)
				_, _, err = a.OptionalChoices("ids", choices, "to use all")
				wantRefusal(t, err, "ids", "Leave it out to use all.")
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	a := mustArgs(t, `{"w":["x"," y ","x"],"v":["ok",""],"u":["a\nb"],"z":["x",4]}`)
	if got, err := a.RequiredStrings("w", StringRule{}); err != nil || !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("strings: %v, %v", got, err)
	}
	_, err := a.RequiredStrings("v", StringRule{})
	wantRefusal(t, err, "v", "Every value", "a non-empty string", `but one was ""`)
	_, err = a.RequiredStrings("u", StringRule{SingleLine: true})
	wantRefusal(t, err, "u", "single line")
	_, _, err = a.OptionalStrings("z", StringRule{}, "")
	wantRefusal(t, err, "z", "but one was 4", "Leaving it out is always possible.")
	_, err = a.RequiredStrings("none", StringRule{})
	wantRefusal(t, err, "none", "required but missing")

	n := mustArgs(t, `{"att":[2,1,2],"bad":[1,0],"empty":[],"str":"1"}`)
	if got, err := n.RequiredPositiveInts("att"); err != nil || !reflect.DeepEqual(got, []int{2, 1}) {
		t.Errorf("ints: %v, %v", got, err)
	}
	_, err = n.RequiredPositiveInts("bad")
	wantRefusal(t, err, "bad", "Every value", "a positive integer", "but one was 0")
	_, _, err = n.OptionalPositiveInts("empty", "to read the mail's text")
	wantRefusal(t, err, "empty", "must not be an empty list", "Leave it out to read the mail's text.")
	_, err = n.RequiredPositiveInts("str")
	wantRefusal(t, err, "str", "a list of one or more positive integers", `but was "1"`)
	if _, ok, err := n.OptionalPositiveInts("absent", ""); ok || err != nil {
		t.Errorf("absent ints: %v, %v", ok, err)
	}
}

// "The echo of the bad value is its raw JSON, cut at 40 characters."
func TestEchoIsCut(t *testing.T) {
	long := strings.Repeat("ü", 60)
	a := mustArgs(t, `{"n":"`+long+`"}`)
	_, err := a.RequiredPositiveInt("n")
	wantRefusal(t, err, "n", `but was "`+strings.Repeat("ü", 39)+`....`)
	if strings.Contains(err.Error(), strings.Repeat("ü", 40)) {
		t.Errorf("echo is not cut: %v", err)
	}
	if got := Echo(json.RawMessage(`{ "a" : [1, 2] }`)); got != `{"a":[1,2]}` {
		t.Errorf("Echo = %q, want compact JSON", got)
	}
	if got := Echo(json.RawMessage(strings.Repeat("7", 41))); got != strings.Repeat("7", 40)+"..." {
		t.Errorf("Echo = %q", got)
	}
}

func TestRefuseUnknown(t *testing.T) {
	a := mustArgs(t, `{"query":"x","pgae":2,"extra":null}`)
	err := a.RefuseUnknown("query", "page")
	wantRefusal(t, err, "pgae", "not known", "query, page")
	if err := mustArgs(t, `{"query":"x","extra":null}`).RefuseUnknown("query"); err != nil {
		t.Errorf("a null unknown argument was refused: %v", err)
	}
	err = mustArgs(t, `{"x":1}`).RefuseUnknown()
	wantRefusal(t, err, "x", "takes no arguments")
}

// "Cap how deep a model may page ... and refuse a page beyond the cap with
// the last page there is in the message."
func TestPage(t *testing.T) {
	tests := []struct {
		raw     string
		last    int
		want    int
		refusal []string
	}{
		{`{}`, 5, 1, nil},
		{`{"page":3}`, 5, 3, nil},
		{`{"page":5}`, 5, 5, nil},
		{`{"page":6}`, 5, 0, []string{"at most 5", "the last page there is", "but was 6", "Leave it out to get the first page."}},
		{`{"page":0}`, 5, 0, []string{"a positive integer", "but was 0"}},
		{`{"page":"2"}`, 5, 0, []string{"a positive integer", `but was "2"`}},
		{`{"page":2}`, 0, 0, []string{"at most 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := mustArgs(t, tc.raw).Page(tc.last)
			if tc.refusal != nil {
				wantRefusal(t, err, PageArgument, tc.refusal...)
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestSliceAndPageInfo(t *testing.T) {
	items := []int{1, 2, 3, 4, 5, 6, 7}
	tests := []struct {
		page, size, last int
		want             []int
		more             bool
	}{
		{1, 3, 5, []int{1, 2, 3}, true},
		{2, 3, 5, []int{4, 5, 6}, true},
		{3, 3, 5, []int{7}, false},
		{4, 3, 5, nil, false},
		// The last page never reports more, whatever was fetched.
		{2, 3, 2, []int{4, 5, 6}, false},
		{1, 7, 5, []int{1, 2, 3, 4, 5, 6, 7}, false},
	}
	for _, tc := range tests {
		got, info := Slice(items, tc.page, tc.size, tc.last)
		if !reflect.DeepEqual(got, tc.want) || info.HasMore != tc.more || info.Page != tc.page {
			t.Errorf("Slice(page %d, size %d, last %d) = %v %+v; want %v more=%v", tc.page, tc.size, tc.last, got, info, tc.want, tc.more)
		}
	}
	// A result reports page and has_more, never a total.
	b, err := json.Marshal(PageInfo{Page: 2, HasMore: true})
	if err != nil || string(b) != `{"page":2,"has_more":true}` {
		t.Errorf("PageInfo JSON = %s, %v", b, err)
	}
	if FetchLimit(3, 10) != 31 {
		t.Errorf("FetchLimit(3, 10) = %d", FetchLimit(3, 10))
	}
	for _, c := range []struct{ window, size, want int }{{100, 10, 9}, {100, 1, 99}, {100, 200, 1}, {0, 5, 1}} {
		if got := LastPage(c.window, c.size); got != c.want {
			t.Errorf("LastPage(%d, %d) = %d, want %d", c.window, c.size, got, c.want)
		}
		if last := LastPage(c.window, c.size); c.window > c.size && FetchLimit(last, c.size) > c.window {
			t.Errorf("LastPage(%d, %d) needs more than the window", c.window, c.size)
		}
	}
}

// FuzzReadArgs reads arbitrary arguments with every reader: nothing
// panics, and every refusal is an *ArgumentError naming the argument read.
func FuzzReadArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"q":"x","page":0}`, `{"q":null}`, `{"q":["a","a"]}`, `{"q":"2026-09-01T14:30+02:00"}`,
		`{"q":1e999}`, `{"q":"\u0000"}`, `{"q":{"a":[{}]}}`, `{"q":-0}`, `{"q":"` + strings.Repeat("é", 50) + `"}`,
		`[1]`, `{"q":1,"q":2}`, `nul`, `{"q":true}`, `{"":""}`,
	} {
		f.Add(s)
	}
	choices := []string{"a", "b"}
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := ReadArgs(json.RawMessage(raw))
		if err != nil {
			if ae, ok := AsArgumentError(err); ok && !strings.Contains(ae.Message, "'"+textcut.Chars(ae.Argument, echoLimit)+"'") {
				t.Fatalf("refusal %q does not name %q", ae.Message, ae.Argument)
			}
			return
		}
		names := append(a.Names(), "q", PageArgument)
		for _, n := range names {
			check := func(err error) {
				if err == nil {
					return
				}
				ae, ok := AsArgumentError(err)
				if !ok {
					t.Fatalf("reading %q: %T %v is not an *ArgumentError", n, err, err)
				}
				if ae.Argument != n || !strings.Contains(ae.Message, "'"+n+"'") {
					t.Fatalf("reading %q: refusal %q does not name it", n, ae.Message)
				}
			}
			_, err := a.RequiredString(n, StringRule{MaxChars: 10, SingleLine: true})
			check(err)
			_, _, err = a.OptionalString(n, StringRule{}, "x")
			check(err)
			_, err = a.RequiredPositiveInt(n)
			check(err)
			_, _, err = a.OptionalBool(n, "")
			check(err)
			_, _, err = a.OptionalDate(n, time.UTC, "")
			check(err)
			_, err = a.RequiredChoice(n, choices)
			check(err)
			_, _, err = a.OptionalChoices(n, choices, "")
			check(err)
			_, err = a.RequiredStrings(n, StringRule{SingleLine: true})
			check(err)
			_, _, err = a.OptionalPositiveInts(n, "")
			check(err)
		}
		if _, err := a.Page(3); err != nil {
			if ae, ok := AsArgumentError(err); !ok || ae.Argument != PageArgument {
				t.Fatalf("page refusal %v does not name page", err)
			}
		}
		_ = a.RefuseUnknown("q")
	})
}

// A refusal repeats what the model sent; logged, it must not.
func TestRefusalLogsNoValue(t *testing.T) {
	const secret = "Subject: salary review"
	a := mustArgs(t, `{"folder":"`+secret+`","page":"`+secret+`","`+secret+`":1,"list":["`+secret+`"]}`)
	var errs []error
	_, err := a.RequiredChoice("folder", []string{"inbox"})
	errs = append(errs, err)
	_, err = a.Page(3)
	errs = append(errs, err)
	errs = append(errs, a.RefuseUnknown("folder", "page", "list"))
	_, err = a.RequiredChoices("list", []string{"x"})
	errs = append(errs, err)
	_, err = a.RequiredString("folder", StringRule{MaxChars: 3})
	errs = append(errs, err)
	errs = append(errs, &ArgumentError{Argument: "folder", Message: "Folder " + secret + " is unknown."})
	for _, err := range errs {
		if !strings.Contains(err.Error(), "salary") && !strings.Contains(err.Error(), "at most 3") {
			t.Errorf("the refusal for the model lost the value: %v", err)
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Warn("tool execution failed", "error", err)
		if strings.Contains(buf.String(), "salary") {
			t.Errorf("the log repeats the value: %s", buf.String())
		}
		if !strings.Contains(buf.String(), "refused") {
			t.Errorf("the log does not say what happened: %s", buf.String())
		}
	}
}

func TestUTF16Len(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "Grüße": 5, "日本": 2, "a😀b": 4, "\xff\xfe": 2, "😀\xed\xa0\x80": 5} {
		if got := UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
}
