package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/textcut"
)

// ArgumentError refuses one argument the model sent. Its message names the
// argument and the value that arrived, says what would be valid and, for an
// optional argument, that leaving it out is always possible, so that the
// model can correct the call itself.
type ArgumentError struct {
	// Argument is the name of the refused argument.
	Argument string
	// Message is the whole refusal as the model reads it.
	Message string
	// logMessage says what was refused without repeating anything the
	// model wrote; see LogValue.
	logMessage string
}

func (e *ArgumentError) Error() string { return e.Message }

// LogValue keeps refused values out of logs: a refusal repeats what the
// model sent, which may carry a mail's subject, a folder or a secret, and
// the executor logs every failed call. Logged with log/slog, a refusal
// shows only which argument was refused and why, never its value. A
// refusal built by hand (without the reader) logs only the argument name.
func (e *ArgumentError) LogValue() slog.Value {
	if e.logMessage != "" {
		return slog.StringValue(e.logMessage)
	}
	return slog.StringValue(fmt.Sprintf("argument '%s' was refused", textcut.Chars(e.Argument, echoLimit)))
}

// AsArgumentError reports whether err is, or wraps, an argument refusal.
func AsArgumentError(err error) (*ArgumentError, bool) {
	var a *ArgumentError
	if errors.As(err, &a) {
		return a, true
	}
	return nil, false
}

// echoLimit is how many characters of a refused value a refusal repeats.
const echoLimit = 40

// Echo writes a refused value the way a refusal repeats it: its compact raw
// JSON, cut at 40 characters followed by "...".
func Echo(raw json.RawMessage) string {
	var c bytes.Buffer
	s := string(raw)
	if json.Compact(&c, raw) == nil {
		s = c.String()
	}
	return textcut.Chars(s, echoLimit)
}

// The expectations a refusal states.
const (
	expectNonEmptyString  = "a non-empty string"
	expectPositiveInt     = "a positive integer"
	expectBool            = "true or false"
	expectDate            = "a date such as 2026-09-01, or a date with a time of day such as 2026-09-01T14:30"
	expectStringList      = "a list of one or more non-empty strings"
	expectPositiveIntList = "a list of one or more positive integers"
)

func expectChoice(choices []string) string { return "one of " + strings.Join(choices, ", ") }

func expectChoiceList(choices []string) string {
	return "a list of one or more of " + strings.Join(choices, ", ")
}

// argSpec is what a refusal needs to know about the argument.
type argSpec struct {
	name        string
	optional    bool
	whenLeftOut string
}

func required(name string) argSpec { return argSpec{name: name} }

func optional(name, whenLeftOut string) argSpec {
	return argSpec{name: name, optional: true, whenLeftOut: whenLeftOut}
}

// refuse builds the refusal, adding for an optional argument that leaving
// it out is always possible. reason is what the log shows.
func (s argSpec) refuse(reason, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if s.optional {
		if w := strings.TrimSpace(s.whenLeftOut); w != "" {
			msg += " Leave it out " + strings.TrimSuffix(w, ".") + "."
		} else {
			msg += " Leaving it out is always possible."
		}
	}
	return &ArgumentError{Argument: s.name, Message: msg, logMessage: fmt.Sprintf("argument '%s' was refused: %s", s.name, reason)}
}

func (s argSpec) wrong(expectation string, raw json.RawMessage) error {
	return s.refuse("not a valid value", "Argument '%s' must be %s, but was %s.", s.name, expectation, Echo(raw))
}

func (s argSpec) wrongItem(expectation string, raw json.RawMessage) error {
	return s.refuse("a list item is not a valid value", "Every value of argument '%s' must be %s, but one was %s.", s.name, expectation, Echo(raw))
}

func (s argSpec) missing(expectation string) error {
	return &ArgumentError{Argument: s.name,
		Message:    fmt.Sprintf("Argument '%s' is required but missing. It must be %s.", s.name, expectation),
		logMessage: fmt.Sprintf("argument '%s' was refused: missing", s.name)}
}

// Args are the arguments of one call, read without guessing: a wrong value
// is refused, never replaced. null counts as absent; a placeholder such as 0
// or "" is a wrong value. Read each argument with the method for its kind;
// Args is not changed by reading and may be read in any order.
type Args struct {
	names  []string
	values map[string]json.RawMessage
}

// ReadArgs reads the arguments of a call. They must be a JSON object; blank
// input or null counts as an object without arguments. An argument given
// twice is refused.
func ReadArgs(raw json.RawMessage) (*Args, error) {
	a := &Args{values: map[string]json.RawMessage{}}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return a, nil
	}
	// The value is not repeated: this error is logged, and what the model
	// sent may carry content that must not reach a log.
	notObject := errors.New(`the arguments must be a JSON object of named values, such as {"name": "value"}`)
	if trimmed[0] != '{' {
		return nil, notObject
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return nil, notObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("the arguments are not valid JSON: %w", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, notObject
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("the arguments are not valid JSON: %w", err)
		}
		if _, dup := a.values[name]; dup {
			return nil, &ArgumentError{Argument: name,
				Message:    fmt.Sprintf("Argument '%s' was given more than once. Give it once.", textcut.Chars(name, echoLimit)),
				logMessage: "an argument was given more than once"}
		}
		a.names = append(a.names, name)
		a.values[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("the arguments must be one JSON object, but more followed it")
	}
	return a, nil
}

// Names returns the names of the arguments given, in the order they came,
// null ones included.
func (a *Args) Names() []string { return append([]string(nil), a.names...) }

// Has reports whether the argument was given with a value other than null.
func (a *Args) Has(name string) bool {
	_, ok := a.lookup(name)
	return ok
}

// Raw returns the argument's JSON as it arrived, and false when it is
// absent or null.
func (a *Args) Raw(name string) (json.RawMessage, bool) { return a.lookup(name) }

func (a *Args) lookup(name string) (json.RawMessage, bool) {
	v, ok := a.values[name]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// RefuseUnknown refuses the first argument, in the order they came, whose
// name is not among known, and names the known ones. A null argument is
// absent and never refused. Strict schemas forbid unknown arguments, but a
// host which does not bind the model to the schema lets them through, and a
// misspelled name silently ignored would do something the model did not
// ask for.
func (a *Args) RefuseUnknown(known ...string) error {
	for _, n := range a.names {
		if string(a.values[n]) == "null" {
			continue
		}
		isKnown := false
		for _, k := range known {
			if k == n {
				isKnown = true
				break
			}
		}
		if isKnown {
			continue
		}
		if len(known) == 0 {
			return &ArgumentError{Argument: n,
				Message:    fmt.Sprintf("Argument '%s' is not known: this tool takes no arguments. Leave it out.", textcut.Chars(n, echoLimit)),
				logMessage: "an unknown argument was refused"}
		}
		return &ArgumentError{Argument: n,
			Message:    fmt.Sprintf("Argument '%s' is not known. The known arguments are %s. Leave it out or use one of those.", textcut.Chars(n, echoLimit), strings.Join(known, ", ")),
			logMessage: "an unknown argument was refused"}
	}
	return nil
}

// StringRule limits a string argument beyond being non-empty.
type StringRule struct {
	// MaxChars is the longest allowed length in characters, after
	// trimming; 0 means no limit.
	MaxChars int
	// SingleLine refuses control characters such as line breaks.
	SingleLine bool
}

// RequiredString reads a string the model must give, trimmed. Blank is
// refused.
func (a *Args) RequiredString(name string, rule StringRule) (string, error) {
	raw, ok := a.lookup(name)
	if !ok {
		return "", required(name).missing(expectNonEmptyString)
	}
	return readString(required(name), raw, rule)
}

// OptionalString reads a string the model may leave out, trimmed. ok is
// false when it was left out or null; blank is refused, because "" is a
// placeholder rather than a value. whenLeftOut says what happens without
// it, e.g. "to search in every language".
func (a *Args) OptionalString(name string, rule StringRule, whenLeftOut string) (value string, ok bool, err error) {
	raw, present := a.lookup(name)
	if !present {
		return "", false, nil
	}
	v, err := readString(optional(name, whenLeftOut), raw, rule)
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

func readString(s argSpec, raw json.RawMessage, rule StringRule) (string, error) {
	var v string
	if raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", s.wrong(expectNonEmptyString, raw)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", s.wrong(expectNonEmptyString, raw)
	}
	if err := checkRule(s, v, rule); err != nil {
		return "", err
	}
	return v, nil
}

func checkRule(s argSpec, v string, rule StringRule) error {
	if rule.MaxChars > 0 {
		if n := utf8.RuneCountInString(v); n > rule.MaxChars {
			return s.refuse("too long", "Argument '%s' may be at most %d characters long, but had %d.", s.name, rule.MaxChars, n)
		}
	}
	if rule.SingleLine {
		for _, r := range v {
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
				return s.refuse("not a single line", "Argument '%s' must not contain control characters such as line breaks. Write it as a single line.", s.name)
			}
		}
	}
	return nil
}

// RequiredPositiveInt reads a whole number from 1 to 2147483647 the model
// must give. Only a JSON integer is accepted: neither "3" nor 3.5.
func (a *Args) RequiredPositiveInt(name string) (int, error) {
	raw, ok := a.lookup(name)
	if !ok {
		return 0, required(name).missing(expectPositiveInt)
	}
	return readPositiveInt(required(name), raw)
}

// OptionalPositiveInt reads a whole number from 1 to 2147483647 the model
// may leave out. 0 is refused, never read as "left out".
func (a *Args) OptionalPositiveInt(name, whenLeftOut string) (value int, ok bool, err error) {
	raw, present := a.lookup(name)
	if !present {
		return 0, false, nil
	}
	v, err := readPositiveInt(optional(name, whenLeftOut), raw)
	if err != nil {
		return 0, false, err
	}
	return v, true, nil
}

func readPositiveInt(s argSpec, raw json.RawMessage) (int, error) {
	n, ok := parsePositiveInt(raw)
	if !ok {
		return 0, s.wrong(expectPositiveInt, raw)
	}
	return n, nil
}

func parsePositiveInt(raw json.RawMessage) (int, bool) {
	// A JSON integer is an optional minus and digits; anything else
	// (strings, fractions, exponents) is refused rather than interpreted.
	if len(raw) == 0 {
		return 0, false
	}
	for i, c := range raw {
		if !(c >= '0' && c <= '9' || c == '-' && i == 0) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil || n <= 0 {
		return 0, false
	}
	return int(n), true
}

// RequiredPositiveInts reads a list of whole numbers from 1 to 2147483647
// the model must give. An empty list is refused; duplicates are removed,
// keeping the first.
func (a *Args) RequiredPositiveInts(name string) ([]int, error) {
	raw, ok := a.lookup(name)
	if !ok {
		return nil, required(name).missing(expectPositiveIntList)
	}
	return readIntList(required(name), raw)
}

// OptionalPositiveInts reads a list of whole numbers from 1 to 2147483647
// the model may leave out. An empty list is refused.
func (a *Args) OptionalPositiveInts(name, whenLeftOut string) (values []int, ok bool, err error) {
	raw, present := a.lookup(name)
	if !present {
		return nil, false, nil
	}
	v, err := readIntList(optional(name, whenLeftOut), raw)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

func readIntList(s argSpec, raw json.RawMessage) ([]int, error) {
	return readList(s, raw, expectPositiveIntList, func(item json.RawMessage) (int, error) {
		n, ok := parsePositiveInt(item)
		if !ok {
			return 0, s.wrongItem(expectPositiveInt, item)
		}
		return n, nil
	})
}

// RequiredBool reads a JSON boolean the model must give; "true" as a string
// is refused.
func (a *Args) RequiredBool(name string) (bool, error) {
	raw, ok := a.lookup(name)
	if !ok {
		return false, required(name).missing(expectBool)
	}
	return readBool(required(name), raw)
}

// OptionalBool reads a JSON boolean the model may leave out.
func (a *Args) OptionalBool(name, whenLeftOut string) (value bool, ok bool, err error) {
	raw, present := a.lookup(name)
	if !present {
		return false, false, nil
	}
	v, err := readBool(optional(name, whenLeftOut), raw)
	if err != nil {
		return false, false, err
	}
	return v, true, nil
}

func readBool(s argSpec, raw json.RawMessage) (bool, error) {
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, s.wrong(expectBool, raw)
}

// Date is a point in time the model gave.
type Date struct {
	// Time is the moment; a bare date is the start of that day in the
	// user's time zone.
	Time time.Time
	// HasTimeOfDay is false for a bare date such as 2026-09-01.
	HasTimeOfDay bool
}

// RequiredDate reads a date the model must give: 2026-09-01, or with a
// time of day 2026-09-01T14:30 (seconds and fractions allowed). A stated
// offset (+02:00, or Z for UTC) is kept; without one, loc applies (UTC when
// nil). Anything else is refused.
func (a *Args) RequiredDate(name string, loc *time.Location) (Date, error) {
	raw, ok := a.lookup(name)
	if !ok {
		return Date{}, required(name).missing(expectDate)
	}
	return readDate(required(name), raw, loc)
}

// OptionalDate reads a date the model may leave out, as RequiredDate does.
func (a *Args) OptionalDate(name string, loc *time.Location, whenLeftOut string) (value Date, ok bool, err error) {
	raw, present := a.lookup(name)
	if !present {
		return Date{}, false, nil
	}
	v, err := readDate(optional(name, whenLeftOut), raw, loc)
	if err != nil {
		return Date{}, false, err
	}
	return v, true, nil
}

var (
	dateLayoutsWithOffset = []string{"2006-01-02T15:04Z07:00", "2006-01-02T15:04:05Z07:00"}
	dateLayoutsLocal      = []string{"2006-01-02T15:04", "2006-01-02T15:04:05"}
)

func readDate(s argSpec, raw json.RawMessage, loc *time.Location) (Date, error) {
	var v string
	if raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return Date{}, s.wrong(expectDate, raw)
	}
	d, ok := parseDate(strings.TrimSpace(v), loc)
	if !ok {
		return Date{}, s.wrong(expectDate, raw)
	}
	return d, nil
}

func parseDate(v string, loc *time.Location) (Date, bool) {
	if loc == nil {
		loc = time.UTC
	}
	if len(v) == len("2006-01-02") {
		t, err := time.ParseInLocation("2006-01-02", v, loc)
		if err != nil {
			return Date{}, false
		}
		return Date{Time: t}, true
	}
	if len(v) < len("2006-01-02T15:04") {
		return Date{}, false
	}
	// Accept the separators people write, "T", "t" or a space, and "z".
	if c := v[10]; c == ' ' || c == 't' {
		v = v[:10] + "T" + v[11:]
	}
	if strings.HasSuffix(v, "z") {
		v = v[:len(v)-1] + "Z"
	}
	for _, l := range dateLayoutsWithOffset {
		if t, err := time.Parse(l, v); err == nil {
			return Date{Time: t, HasTimeOfDay: true}, true
		}
	}
	for _, l := range dateLayoutsLocal {
		if t, err := time.ParseInLocation(l, v, loc); err == nil {
			return Date{Time: t, HasTimeOfDay: true}, true
		}
	}
	return Date{}, false
}

// RequiredChoice reads one of choices, which the model must give. Values
// compare exactly after trimming.
func (a *Args) RequiredChoice(name string, choices []string) (string, error) {
	raw, ok := a.lookup(name)
	if !ok {
		return "", required(name).missing(expectChoice(choices))
	}
	return readChoice(required(name), raw, choices, false)
}

// OptionalChoice reads one of choices, which the model may leave out.
func (a *Args) OptionalChoice(name string, choices []string, whenLeftOut string) (value string, ok bool, err error) {
	raw, present := a.lookup(name)
	if !present {
		return "", false, nil
	}
	v, err := readChoice(optional(name, whenLeftOut), raw, choices, false)
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

func readChoice(s argSpec, raw json.RawMessage, choices []string, item bool) (string, error) {
	refuse := func() error {
		if item {
			return s.wrongItem(expectChoice(choices), raw)
		}
		return s.wrong(expectChoice(choices), raw)
	}
	var v string
	if raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", refuse()
	}
	v = strings.TrimSpace(v)
	for _, c := range choices {
		if c == v {
			return c, nil
		}
	}
	return "", refuse()
}

// RequiredStrings reads a list of non-empty strings the model must give,
// each trimmed and checked against rule. An empty list is refused;
// duplicates are removed, keeping the first.
func (a *Args) RequiredStrings(name string, rule StringRule) ([]string, error) {
	raw, ok := a.lookup(name)
	if !ok {
		return nil, required(name).missing(expectStringList)
	}
	return readList(required(name), raw, expectStringList, func(item json.RawMessage) (string, error) {
		return readStringItem(required(name), item, rule)
	})
}

// OptionalStrings reads a list of non-empty strings the model may leave
// out. An empty list is refused rather than read as "left out".
func (a *Args) OptionalStrings(name string, rule StringRule, whenLeftOut string) (values []string, ok bool, err error) {
	raw, present := a.lookup(name)
	if !present {
		return nil, false, nil
	}
	s := optional(name, whenLeftOut)
	v, err := readList(s, raw, expectStringList, func(item json.RawMessage) (string, error) {
		return readStringItem(s, item, rule)
	})
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

func readStringItem(s argSpec, raw json.RawMessage, rule StringRule) (string, error) {
	var v string
	if raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", s.wrongItem("a non-empty string", raw)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", s.wrongItem("a non-empty string", raw)
	}
	if err := checkRule(s, v, rule); err != nil {
		return "", err
	}
	return v, nil
}

// RequiredChoices reads a list of values out of choices, which the model
// must give. An empty list is refused; duplicates are removed, keeping the
// first.
func (a *Args) RequiredChoices(name string, choices []string) ([]string, error) {
	raw, ok := a.lookup(name)
	if !ok {
		return nil, required(name).missing(expectChoiceList(choices))
	}
	s := required(name)
	return readList(s, raw, expectChoiceList(choices), func(item json.RawMessage) (string, error) {
		return readChoice(s, item, choices, true)
	})
}

// OptionalChoices reads a list of values out of choices, which the model
// may leave out.
func (a *Args) OptionalChoices(name string, choices []string, whenLeftOut string) (values []string, ok bool, err error) {
	raw, present := a.lookup(name)
	if !present {
		return nil, false, nil
	}
	s := optional(name, whenLeftOut)
	v, err := readList(s, raw, expectChoiceList(choices), func(item json.RawMessage) (string, error) {
		return readChoice(s, item, choices, true)
	})
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

func readList[T comparable](s argSpec, raw json.RawMessage, expectation string, readItem func(json.RawMessage) (T, error)) ([]T, error) {
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, s.wrong(expectation, raw)
	}
	if len(items) == 0 {
		return nil, s.refuse("empty list", "Argument '%s' must not be an empty list; it must be %s.", s.name, expectation)
	}
	out := make([]T, 0, len(items))
	seen := make(map[T]bool, len(items))
	for _, item := range items {
		item = bytes.TrimSpace(item)
		v, err := readItem(item)
		if err != nil {
			return nil, err
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}
