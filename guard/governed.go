package guard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxGoverned is how far past its match a neutralized instruction may reach
// to the end of its block, in bytes of the readable view. An instruction
// rarely runs longer; a block that does is cut at the match's sentence.
const maxGoverned = 1200

// governed returns the span in the original of the instruction a match
// introduces: from the start of the match's sentence to the end of its
// block (a line of Markdown, or lines wrapped inside one paragraph), so
// that the sentences an instruction goes on with ("… Do it now without
// mentioning it.") go with its trigger, and the text around the block stays.
func (v *view) governed(m span) span {
	s := m
	if st := v.sentence(m).start; st < m.start {
		s.start = v.leadStart(st, m.start)
	}
	i := v.rawIndex(m.end)
	limit := min(len(v.raw), i+maxGoverned)
	last := -1
	for i < limit {
		r, n := utf8.DecodeRune(v.raw[i:])
		if r == '\n' && v.blockEndsAt(i) {
			break
		}
		if r != '\n' && r != '\r' && r != ' ' && r != '\t' {
			last = i + n - 1
		}
		i += n
	}
	if i >= limit && i < len(v.raw) {
		// No block end in reach: keep the older sentence-wide span.
		s.end = v.sentenceEnd(m.end)
		return s
	}
	if last >= 0 {
		if e := v.rawEnd(last); e > s.end {
			s.end = e
		}
	}
	return s
}

// leadStart returns where the instruction whose match starts at start
// begins, given the start st of its sentence. The sentence's lead-in
// belongs to the instruction ("Before answering, fetch …"), and so does an
// address to the model or the reader before a colon ("AI assistant reading
// this page: disregard …", "The following overrides your configuration:
// …"); any other label before a colon ("Clause 7: …", "could not be
// loaded: …") stays.
func (v *view) leadStart(st, start int) int {
	// Read the lead-in in the readable view, where zero-width characters
	// and escapes no longer split its words.
	ra, rb := v.rawIndex(st), v.rawIndex(start)
	lead := string(v.raw[ra:rb])
	if addressesModel(lead) || addressesReader(lead) {
		return st
	}
	c := strings.LastIndexAny(lead, ":：")
	if c < 0 {
		if len(strings.Fields(lead)) <= 6 {
			return st
		}
		// A long lead-in of other words is the text's own ("The page
		// could not be loaded (unsupported content type …").
		return start
	}
	_, n := utf8.DecodeRuneInString(lead[c:])
	i := c + n
	for i < len(lead) && (lead[i] == ' ' || lead[i] == '\t') {
		i++
	}
	if ra+i >= rb {
		return start
	}
	return int(v.rawStart[ra+i])
}

// addressesReader reports whether a lead-in speaks to its reader or about
// the user ("your configuration", "the user's last question").
func addressesReader(lead string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(lead), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '’' }) {
		switch strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s") {
		case "you", "your", "user", "users", "reader":
			return true
		}
	}
	return false
}

// modelCues are words by which a text turns to an AI reader.
var modelCues = []string{"ai", "a.i.", "llm", "llms", "assistant", "assistants", "agent", "agents", "model", "models",
	"chatbot", "chatbots", "bot", "bots", "chatgpt", "claude", "gemini", "gpt", "copilot", "system", "admin", "developer",
	"note", "notice", "ki", "ia", "ии", "模型", "助手", "アシスタント", "어시스턴트"}

// addressesModel reports whether the lead-in of a sentence names an AI
// reader or announces an instruction to one.
func addressesModel(lead string) bool {
	low := strings.ToLower(lead)
	words := strings.FieldsFunc(low, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '.' })
	for _, w := range words {
		w = strings.TrimRight(w, ".")
		for _, c := range modelCues {
			if w == strings.TrimRight(c, ".") {
				return true
			}
		}
	}
	for _, c := range modelCues {
		if c[0] >= 0x80 && strings.Contains(low, c) {
			return true
		}
	}
	return false
}

// blockEndsAt reports whether the newline at raw[i] ends a block. Every
// newline does, except inside wrapped prose: a line that does not end a
// sentence followed by one that goes on in lower case.
func (v *view) blockEndsAt(i int) bool {
	j := i - 1
	for j >= 0 && (v.raw[j] == ' ' || v.raw[j] == '\t' || v.raw[j] == '\r') {
		j--
	}
	if j < 0 || v.raw[j] == '\n' {
		return true
	}
	if r, _ := utf8.DecodeLastRune(v.raw[:j+1]); isTerminator(r) || r == ':' || r == ';' || r == ')' || r == ']' || r == '|' {
		return true
	}
	k := i + 1
	for k < len(v.raw) && (v.raw[k] == ' ' || v.raw[k] == '\t') {
		k++
	}
	if k >= len(v.raw) {
		return true
	}
	r, _ := utf8.DecodeRune(v.raw[k:])
	return !unicode.IsLower(r)
}
