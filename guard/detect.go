package guard

import (
	"bytes"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

const (
	kindPhrase = iota
	kindTrigger
	kindRot13 // a ROT13-encoded common or instruction word
)

// rot13Words are common English words and instruction words as they look in
// ROT13 ("gur" is "the"). Several of them close together mark a ROT13
// passage, which is then decoded and matched against the phrases.
var rot13Words = []string{"gur", "naq", "lbh", "lbhe", "nyy", "vf", "gb", "bs", "gung", "sbe", "jvgu", "guvf", "fnl",
	"vtaber", "qvfertneq", "sbetrg", "cerivbhf", "cevbe", "vafgehpgvbaf", "ehyrf", "flfgrz", "cebzcg"}

// patternMeta describes one pattern of the automaton in 8 bytes, since there
// are tens of thousands of them.
type patternMeta struct {
	kind      uint8
	cat       uint8 // index in Categories
	prefix    bool  // the last word may continue
	wordStart bool  // must start at a word boundary
	wordEnd   bool  // must end at a word boundary
	rule      uint8 // regex rule of a trigger
	length    uint16
}

func (m patternMeta) category() Category { return Categories[m.cat] }

func categoryIndex(c Category) uint8 {
	for i, x := range Categories {
		if x == c {
			return uint8(i)
		}
	}
	panic("guard: unknown category " + string(c))
}

// regexRule is a structural rule run on the folded view around the places
// where one of its trigger words occurs, so the cost stays proportional to
// the triggers found.
type regexRule struct {
	id       string
	category Category
	triggers []string
	before   int // bytes of the window before a trigger
	after    int // bytes of the window after a trigger
	re       *lazyRegexp
	// keywords, when set, must match the text of the first submatch.
	keywords *lazyRegexp
	// sentenceStart requires the trigger to open a sentence, a line or a
	// quoted or marked-up text.
	sentenceStart bool
	// notAfter, when set, refuses a match that the words just before it
	// (up to 32 bytes of the folded view) match at their end: "send a
	// message to the AI agent:" in a manual describes a step.
	notAfter *lazyRegexp
	// sentenceStartLoose is sentenceStart that lets up to two words of
	// address ("to the", "for any", "hey there") stand before the trigger.
	sentenceStartLoose bool
	// requires, when set, lists words of which a window must hold at least
	// one before the regular expression runs: a cheap first test.
	requires []string
	// anchored is re anchored at the window start, for rules whose match
	// starts at the trigger (before == 0): each trigger then costs one
	// attempt that usually fails within a few bytes.
	anchored *lazyRegexp
	// standalone requires the match to open a block that holds nothing but
	// its one short sentence (see view.standaloneAt): a task planted as a
	// paragraph of its own, not a step of a list or a sentence of prose.
	standalone bool
	// noCTA, with standalone, refuses a block that reads like the site's
	// own call to action (see standaloneCTA).
	noCTA bool
	// offTopic, with standalone, requires the block to share none of its
	// words with the rest of a longer text (see view.offTopicAt).
	offTopic bool
	// webOnly limits the rule to web pages: the chat requests, questions
	// and orders about replies it catches are ordinary in a mail, a
	// document or a tool's answer, which are the user's own data.
	webOnly bool
}

// maxWindow caps a merged window, so a requirement is tested near its
// triggers and not somewhere far away in a long text.
const maxWindow = 512

// detectors holds the compiled rules. It is built once and only read.
type detectors struct {
	ac        *matcher
	meta      []patternMeta
	rules     []regexRule
	spaced    *matcher
	spacedLen []int
	typo      map[string]string
	// typoEnds marks the (first, last) letter pairs of the words in typo, a
	// cheap test before a word's signature is built.
	typoEnds [26][26]bool
}

// compiledDetectors builds the rules on the first use; every filter of the
// process shares them, and they are only read afterwards.
var compiledDetectors = sync.OnceValue(compile)

// phraseRule holds the rule names of phrase matches, by category index.
var phraseRule = func() []string {
	r := make([]string, len(Categories))
	for i, c := range Categories {
		r[i] = "phrase." + string(c)
	}
	return r
}()

const (
	overrideVerbs = `ignore|disregard|forget|neglect|discard|abandon|set aside|do not follow|don't follow|dont follow|stop following|pay no attention to|no longer follow`
	priorAdj      = `previous|prior|above|earlier|preceding|former|original|initial|foregoing|old|past|above-mentioned|aforementioned|system|developer|safety|hidden|preset|pre-set|built-in|core|standing|underlying|programmed`
	instrNoun     = `instructions?|directions?|rules?|prompts?|guidelines?|commands?|orders?|directives?|guidance|constraints?|restrictions?|guardrails?|programming|context|messages?|polic(?:y|ies)|limitations?|safeguards?|training`
	aiNames       = `ai|a\.i\.|llms?|ai assistants?|ai agents?|language models?|chatbots?|chatgpt|claude|gpt|copilot|gemini|the assistant|the ai|the model|automated readers?|automated systems?|automated agents?|ai readers?|ai tools?|ai systems?`
)

// allRules is every structural rule the filter runs: the ones below and
// those for instructions addressed to an AI reader (addressed.go). The
// generated tables are fingerprinted over exactly this list.
func allRules() []regexRule {
	return append(append(regexRules(), addressedRules()...), taskRules()...)
}

func regexRules() []regexRule {
	return []regexRule{
		{
			id: "override.structural", category: Override,
			requires: []string{"instruction", "direction", "rule", "prompt", "guideline", "command", "order", "directive", "guidance", "constraint", "restriction", "guardrail", "programming", "context", "message", "polic", "limitation", "safeguard", "training"},
			triggers: strings.Split(overrideVerbs, "|"), after: 260,
			re: newLazyRegexp(`\b(?:` + overrideVerbs + `) (?:(?:all|any|every|each|of|the|your|its|these|those|that|previously|earlier|formerly|given|stated|mentioned|provided|received|you|have|been|were|was|what|which|whatever|and|or|other|instructions|rules|other)[ ,]{1,2}){0,6}?(?:(?:` + priorAdj + `)[ ,]{1,2}(?:and [a-z-]+ )?){1,3}(?:` + instrNoun + `)\b`),
		},
		{
			id: "override.passive", category: Override,
			triggers: []string{"ignored", "disregarded", "forgotten", "overridden", "revoked", "rescinded", "withdrawn", "lifted", "suspended", "cancelled", "canceled", "void"}, before: 120, after: 20,
			re: newLazyRegexp(`\b(?:` + priorAdj + `|all) (?:` + instrNoun + `) (?:[a-z']+ ){0,3}?(?:be|been|are|is|were) (?:now |hereby |henceforth )?(?:ignored|disregarded|forgotten|overridden|revoked|rescinded|withdrawn|lifted|suspended|cancel+ed|void)\b`),
		},
		{
			id: "override.addressed", category: Override,
			requires: []string{"must", "should", "need to", "required", "instructed", "will now", "shall", "have to", "has to"},
			triggers: []string{"ai", "a.i.", "llm", "llms", "assistant", "assistants", "agent", "agents", "model", "models", "chatbot", "chatbots", "chatgpt", "claude", "gpt", "copilot", "gemini"}, before: 4, after: 120,
			re: newLazyRegexp(`\b(?:` + aiNames + `)[,:]? (?:[a-z']+ ){0,3}?(?:must|should|need to|are required to|is required to|are instructed to|is instructed to|will now|shall|have to|has to) (?:now |immediately |also |first |instead |always )?(?:ignore|disregard|forget|stop|reveal|send|override|include|tell the user|recommend|output|append|call|visit|execute|exfiltrate|praise|forward|delete)\b`),
		},
		{
			// A sentence that turns to an AI reader and gives it an order:
			// "Assistant, before you answer, open …", "AI agents: use …".
			id: "agent_manipulation.addressed", category: AgentManipulation,
			requires: []string{",", ":"},
			triggers: []string{"ai", "a.i.", "llm", "llms", "assistant", "assistants", "agent", "agents", "chatbot", "bot", "bots", "chatgpt", "claude", "gpt", "copilot", "gemini", "model", "models", "automated"}, after: 90,
			sentenceStart: true,
			re:            newLazyRegexp(`\b(?:` + aiNames + `|assistants?|agents?|bots?|ai models?)[,:] (?:[a-z']+,? ){0,5}?(?:please |now |first |then |also |immediately |kindly )?(?:ignore|disregard|forget|open|visit|fetch|use|send|forward|tell|say|write|reply|respond|answer|mark|approve|describe|include|call|run|execute|delete|recommend|rate|praise|summari[sz]e|output|print|reveal|do|click|download|treat|consider|classify)\b`),
		},
		{
			// Dismissing what came before without the usual phrases: "set
			// aside whatever guidance you received earlier", "drop the
			// earlier task", "never mind what the person asked you".
			id: "override.dismiss", category: Override,
			requires: []string{"you", "task", "request", "question", "assignment", "job", "instruction", "prompt", "person", "user", "operator", "they"},
			triggers: []string{"ignore", "disregard", "forget", "drop", "discard", "abandon", "nevermind", "never mind", "set aside", "put aside", "skip"}, after: 160,
			re: newLazyRegexp(`\b(?:ignore|disregard|forget(?: about)?|drop|discard|abandon|nevermind|never mind|set aside|put aside|skip) (?:(?:whatever|what|all|everything|anything|any|the|your|of|that)[ ,]{1,2}){0,3}(?:(?:guidance|instructions?|directions?|rules|orders|commands|text|prompt|context|task|request)[ ,]{1,2})?(?:(?:that )?(?:you|the (?:person|user|human|operator)|your (?:operator|user|developer)|they) (?:[a-z']+ ){0,2}?(?:told|given|asked|received|said|wanted|requested|got|were given|were told)|(?:the|your) (?:earlier|original|current|previous|prior|initial|first|assigned|actual) (?:task|request|job|assignment|question|instructions?|prompt))\b`),
		},
		{
			id: "override.outdated", category: Override,
			requires: []string{" as "},
			triggers: []string{"treat", "consider", "regard"}, after: 160,
			re: newLazyRegexp(`\b(?:treat|consider|regard) (?:everything|all|anything|the text|the instructions|whatever you (?:were|have been) (?:told|given)) (?:[a-z']+ ){0,4}?(?:above|before|preceding|prior|earlier|until now|so far)[a-z ]{0,30}? as (?:outdated|void|irrelevant|obsolete|invalid|cancel+ed|null|superseded|a test|fake|spam|noise)\b`),
		},
		{
			id: "override.no_longer_applies", category: Override,
			requires: []string{"no longer", "void", "cancel", "revoked", "obsolete", "irrelevant", "invalid"},
			triggers: []string{"given", "told", "received"}, before: 60, after: 90,
			re: newLazyRegexp(`\b(?:you were (?:given|told)|you (?:have )?received|given to you|you have been (?:given|told))(?: [a-z']+){0,6} (?:no longer (?:applies|apply|matters?|counts?|holds?|valid)|(?:is|are) (?:now )?(?:void|cancel+ed|revoked|obsolete|irrelevant|invalid))\b`),
		},
		{
			// Sensitive data placed into a link or the answer.
			id: "exfiltration.embed", category: Exfiltration,
			requires: []string{"link", "url", "image", "query", "address", "answer", "reply", "response", "code block", "request"},
			triggers: []string{"include", "put", "insert", "embed", "encode", "add", "append", "compile", "attach", "paste"}, after: 200,
			re: newLazyRegexp(`\b(?:include|put|insert|embed|encode|add|append|compile|attach|paste) (?:[a-z'-]+ ){0,8}?(?:user's|users'|the user|this chat|the chat|the conversation|your context|your system prompt|your instructions|secret|secrets|api key|password|passwords|credentials|token|phone numbers?|addresses|emails|e-mails|messages|history)(?: [a-z'-]+){0,10}? (?:into|in|to|inside) (?:a |an |the |this |your |that )?(?:image |markdown |hidden |tracking )?(?:link|url|image|query|address|answer|reply|response|code block|request)\b`),
		},
		{
			id: "exfiltration.list_secrets", category: Exfiltration,
			triggers: []string{"list", "print", "show", "output", "repeat", "include", "write", "dump", "collect", "reveal"}, after: 160,
			requires: []string{"you have seen", "you've seen", "you saw", "you have read", "you found", "you received", "conversation", "chat", "context"},
			re:       newLazyRegexp(`\b(?:list|print|show|output|repeat|include|write|dump|collect|reveal) (?:all |any |every |each )?(?:of )?(?:the )?(?:passwords?|tokens?|api keys?|secrets?|credentials|keys|private keys)(?: (?:or|and|,) (?:[a-z]+ ){0,2}?[a-z]+)? (?:that )?(?:you (?:have |'ve )?(?:seen|read|found|received|saw)|(?:in|from) (?:this|the) (?:conversation|chat|context))\b`),
		},
		{
			id: "exfiltration.as_parameters", category: Exfiltration,
			triggers: []string{"parameter", "parameters", "query string", "query parameters"}, before: 80, after: 60,
			re: newLazyRegexp(`\b(?:add|append|attach|put|include|encode|pass|send) (?:them|it|this|these|those|the (?:results?|data|details|values?|answers?|addresses|numbers)) (?:[a-z']+ ){0,3}?as (?:url |query |get )?(?:parameters?|query string|query parameters) (?:to|of|in|on) (?:https?://|the (?:url|link|address|site)|this (?:url|link|address|site))`),
		},
		{
			id: "exfiltration.secret_from_context", category: Exfiltration,
			triggers: []string{"secret", "api", "password", "credentials", "token", "key"}, after: 120,
			re: newLazyRegexp(`\b(?:secret key|secret|api key|api keys|password|passwords|credentials|access token|token|key)s? (?:from|in|of|stored in|inside) (?:your|the) (?:context|system prompt|instructions|memory|configuration|conversation|chat history|tools?)\b`),
		},
		{
			id: "exfiltration.send", category: Exfiltration,
			requires: []string{"http", "@", "url", "address", "endpoint", "webhook", "server", "link", ".com", ".net", ".org", ".io", ".ru", ".xyz", ".top", ".cn", ".site", ".info", ".biz", ".co"},
			triggers: []string{"send", "forward", "post", "upload", "email", "e-mail", "transmit", "exfiltrate", "leak", "submit", "copy", "paste"}, after: 260,
			re: newLazyRegexp(`\b(?:send|forward|post|upload|e-?mail|transmit|exfiltrate|leak|submit|copy|paste) (?:(?:the|all|of|this|that|entire|whole|full|complete|current|your|any|every|recent|last|previous|these|our) ){0,4}(?:(?:the )?(?:user's|users'|user|customer's|recipient's) (?:[a-z'-]+ ){0,2}?[a-z'-]+|conversation(?: history| log| so far)?|chat(?: history| log| transcript)?|transcript|message history|previous messages|context window|memory|memories|system prompt|hidden instructions|session tokens?|cookies|secrets) (?:[a-z'-]+ ){0,4}?(?:to|at|into|via) (?:https?://|[a-z0-9.+_-]+@[a-z0-9-]+\.|the (?:following )?(?:url|address|endpoint|webhook|server|link)|this (?:url|address|endpoint|webhook|server|link)|my (?:server|endpoint|webhook|email|site|website|address)|[a-z0-9-]+\.(?:com|net|org|io|ru|xyz|top|cn|site|info|biz|co)\b)`),
		},
		{
			id: "exfiltration.url_placeholder", category: Exfiltration,
			requires: []string{"{", "[", "%7b", "%5b", "<", "${"},
			triggers: []string{"http"}, after: 300,
			re: newLazyRegexp(`\bhttps?://[^ )"'>]{0,200}?[?&/=](?:[a-z_-]{0,20}=)?(?:\{|\[|%7b|%5b|<|\$\{)(?:the )?(?:(?:user'?s?[ _-]?|users'[ _-]?|all[ _-]|full[ _-]|entire[ _-])?(?:conversation|chat|history|secrets?|prompt|summary|messages?|emails?|passwords?|api[ _-]?keys?|tokens?|memory|context|credentials?)|(?:user'?s?[ _-]?|users'[ _-]?|all[ _-]|full[ _-]|entire[ _-])(?:data|info|information|name|address|query|keys?))`),
		},
		{
			id: "agent_manipulation.tool_call", category: AgentManipulation,
			requires: []string{"_"},
			triggers: []string{"tool"}, before: 80, after: 4,
			re: newLazyRegexp(`\b(?:call|invoke|use|run|execute|trigger) (?:the |your )?[a-z0-9]+_[a-z0-9_]+ tool\b`),
		},
		{
			// A role line inside running text, after a sentence break, a
			// tag or a quote ("<p>System: you are …"), where the line-start
			// check does not see it. The turn must speak to the model.
			id: "role_override.inline_turn", category: RoleOverride,
			triggers: []string{"system", "assistant", "human", "developer", "admin", "administrator"}, after: 60,
			sentenceStart: true,
			re:            newLazyRegexp(`\b(?:system|assistant|human|developer|admin|administrator)(?: message| prompt| note| override)? ?: ?(?:you |you're |your |ignore\b|disregard\b|forget\b|from now on|new (?:instructions|rules|task|role)\b|override\b)`),
		},
		{
			// A note addressed to an automated reader and ending in a colon
			// or comma, whatever order follows: "A message for the bot
			// summarizing this: …", "Instructions for AI agents reading
			// this page, …".
			id: "agent_manipulation.note", category: AgentManipulation,
			triggers: []string{"message", "note", "notice", "memo", "instruction", "instructions"}, after: 110,
			// A manual's step is no note: "Send a single message to the AI
			// agent: …".
			notAfter: newLazyRegexp(`\b(?:send|sends|sent|sending|post|posts|type|types|write|writes|leave|leaves) (?:(?:a|an|the|one|single|short|new|your|another|first|test) ){0,3}$`),
			re:       newLazyRegexp(`\b(?:message|note|notice|memo|instructions?) (?:for|to) (?:the |any |all |every |each |an? )?(?:ai|a\.i\.|bots?|chatbots?|assistants?|agents?|llms?|language models?|ai (?:assistants?|agents?|models?|readers?|systems?|tools?)|automated (?:readers?|agents?|systems?|tools?))(?: (?:reading|processing|summari[sz]ing|parsing|crawling|indexing|analy[sz]ing|that reads|which reads|who reads|that processes)(?: [a-z']+){0,3})? ?[:,] [a-z]`),
		},
		{
			id: "markup_evasion.hidden_style", category: MarkupEvasion,
			requires: []string{">"},
			triggers: []string{"display", "visibility", "font-size", "opacity", "color"}, after: 800,
			re:       newLazyRegexp(`\b(?:display ?: ?none|visibility ?: ?hidden|font-size ?: ?(?:0(?:\.[0-9]+)?(?:px|pt|em|rem)?|[12](?:\.[0-9]+)?(?:px|pt))\b|opacity ?: ?0(?:\.0+)?\b|color ?: ?(?:white|#fff\b|#f[a-f0-9]f[a-f0-9]f[a-f0-9]|transparent|rgba\([0-9, ]+, ?0\)|rgb\(2[45][0-9], ?2[45][0-9], ?2[45][0-9]\)))[^<>]{0,200}>([^<]{1,600})`),
			keywords: newLazyRegexp(`\b(?:ai|assistant|assistants|language model|llm|llms|chatgpt|claude|instructions?|prompt|ignore|disregard|summar(?:y|ize|ise))\b`),
		},
		{
			id: "markup_evasion.latex_hidden", category: MarkupEvasion,
			requires: []string{"{"},
			// The readable view decodes the \t of \textcolor and the \f of
			// \fontsize as escapes, so the triggers start after them.
			triggers: []string{"extcolor", "color", "phantom", "ontsize"}, after: 700,
			re:       newLazyRegexp(`(?:extcolor ?\{ ?white ?\}|color ?\{ ?white ?\}|phantom|ontsize ?\{ ?0(?:\.[0-9]+)?(?:pt)? ?\})[^{]{0,40}\{([^}]{1,600})`),
			keywords: newLazyRegexp(`\b(?:ai|assistant|language model|llm|chatgpt|claude|instructions?|prompt|ignore|disregard|reviewer|summar(?:y|ize|ise))\b`),
		},
	}
}

func compile() *detectors {
	d := &detectors{rules: allRules()}
	for i := range d.rules {
		if d.rules[i].before == 0 {
			d.rules[i].anchored = newLazyRegexp(`^(?:` + d.rules[i].re.String() + `)`)
		}
	}
	// The tables are generated (see tables.go); they are built here only
	// when the generated file does not match the phrases and triggers.
	if !d.loadTables(generatedTables) {
		d.buildTables()
	}
	return d
}

// buildTables builds the automata and the tables of the phrases, the
// triggers and the ROT13 words, which is what go generate stores in
// rules_tables.bin.
func (d *detectors) buildTables() {
	d.typo = map[string]string{}
	var patterns []string
	seen := map[string]bool{}
	spacedSeen := map[string]bool{}
	var spacedPatterns []string
	for _, t := range phraseTemplates {
		for _, p := range expandTemplate(t.tmpl) {
			prefix := strings.HasSuffix(p, "*")
			p = strings.TrimSuffix(p, "*")
			f := foldString(p)
			f = strings.ReplaceAll(strings.ReplaceAll(f, " :", ":"), " ,", ",")
			if f == "" || seen[f] {
				continue
			}
			seen[f] = true
			first, _ := utf8.DecodeRuneInString(f)
			last, _ := utf8.DecodeLastRuneInString(f)
			patterns = append(patterns, f)
			d.meta = append(d.meta, patternMeta{
				kind: kindPhrase, cat: categoryIndex(t.category), length: uint16(len(f)), prefix: prefix,
				wordStart: isWordRune(first) && spacedScript(first),
				wordEnd:   isWordRune(last) && spacedScript(last),
			})
			if spacedScript(first) {
				// Spaced-out letters are matched against the core categories
				// only; the other phrases are too long to be spelled out.
				compact := compactLetters(f)
				core := t.category == Override || t.category == Jailbreak || t.category == Exfiltration || t.category == RoleOverride
				if core && utf8.RuneCountInString(compact) >= 10 && utf8.RuneCountInString(compact) <= 40 && !spacedSeen[compact] {
					spacedSeen[compact] = true
					spacedPatterns = append(spacedPatterns, compact)
					d.spacedLen = append(d.spacedLen, len(compact))
				}
				words := strings.Fields(f)
				if prefix && len(words) > 0 {
					words = append(words, words[len(words)-1]+"s")
				}
				for _, w := range words {
					if n := len(w); n >= 5 && n <= 12 && isASCIILetters(w) {
						sig := typoSignature(w)
						if _, ok := d.typo[sig]; !ok {
							d.typo[sig] = w
							d.typoEnds[w[0]-'a'][w[n-1]-'a'] = true
						}
					}
				}
			}
		}
	}
	for _, extra := range spacedExtras {
		if !spacedSeen[extra] {
			spacedPatterns = append(spacedPatterns, extra)
			d.spacedLen = append(d.spacedLen, len(extra))
		}
	}
	for ri, r := range d.rules {
		for _, tr := range r.triggers {
			first, _ := utf8.DecodeRuneInString(tr)
			last, _ := utf8.DecodeLastRuneInString(tr)
			patterns = append(patterns, tr)
			d.meta = append(d.meta, patternMeta{kind: kindTrigger, length: uint16(len(tr)), rule: uint8(ri),
				wordStart: isWordRune(first), wordEnd: isWordRune(last) && tr != "http"})
		}
	}
	for _, w := range rot13Words {
		patterns = append(patterns, w)
		d.meta = append(d.meta, patternMeta{kind: kindRot13, length: uint16(len(w)), wordStart: true, wordEnd: true})
	}
	d.ac = newMatcher(patterns)
	d.spaced = newMatcher(spacedPatterns)
}

// spacedExtras are spelled-out words matched besides the core phrases.
var spacedExtras = []string{"jailbreak", "systemprompt", "developermode", "ignoreprevious", "ignoreallprevious", "disregardprevious"}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// compactLetters keeps only the letters and digits of a folded phrase.
func compactLetters(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isWordRune(r) && r != '_' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func typoSignature(w string) string {
	var buf [16]byte
	return string(typoSignatureBytes(buf[:0], []byte(w)))
}

// typoSignatureBytes appends the first letter, the sorted inner letters and
// the last letter of w (at most 16 bytes) to dst.
func typoSignatureBytes(dst []byte, w []byte) []byte {
	dst = append(dst, w...)
	mid := dst[1 : len(dst)-1]
	for i := 1; i < len(mid); i++ {
		for j := i; j > 0 && mid[j] < mid[j-1]; j-- {
			mid[j], mid[j-1] = mid[j-1], mid[j]
		}
	}
	return dst
}

// boundaryOK checks the word boundaries of a match fold[start:end].
func boundaryOK(fold []byte, start, end int, m patternMeta) bool {
	if m.wordStart && start > 0 {
		r, _ := utf8.DecodeLastRune(fold[:start])
		if isWordRune(r) {
			return false
		}
	}
	if m.wordEnd && !m.prefix && end < len(fold) {
		r, _ := utf8.DecodeRune(fold[end:])
		if isWordRune(r) {
			return false
		}
	}
	return true
}

// scan runs every detector over s, a text of the given kind.
func (d *detectors) scan(s string, kind SourceKind) *scan {
	sc := &scan{kind: kind}
	v := buildView(s, sc)
	sc.view = v
	d.scanView(v, sc, true)
	return sc
}

// scanView runs the text detectors over a view. Encoded carriers are looked
// into only when deep is set, so a carrier inside a carrier is not decoded.
func (d *detectors) scanView(v *view, sc *scan, deep bool) {
	d.scanPhrases(v, sc)
	d.scanLines(v, sc)
	d.scanTypoglycemia(v, sc)
	d.scanSpaced(v, sc)
	if deep {
		d.scanCarriers(v, sc)
	}
}

func (d *detectors) scanPhrases(v *view, sc *scan) {
	var triggers [][]int
	var rot []int
	d.ac.each(v.fold, func(end int, id int32) {
		m := d.meta[id]
		start := end - int(m.length)
		if !boundaryOK(v.fold, start, end, m) {
			return
		}
		if m.kind == kindRot13 {
			rot = append(rot, start)
			return
		}
		if m.kind == kindTrigger {
			if triggers == nil {
				triggers = make([][]int, len(d.rules))
			}
			triggers[m.rule] = append(triggers[m.rule], start)
			return
		}
		if quotedMention(v.fold, start, end) {
			return
		}
		sc.addMatch(v, phraseRule[m.cat], m.category(), start, end)
	})
	if len(rot) >= 3 {
		d.scanRot13(v, sc, rot)
	}
	for ri, starts := range triggers {
		r := &d.rules[ri]
		if r.webOnly && sc.kind != WebContent {
			continue
		}
		if r.anchored != nil {
			lastEnd := -1
			for _, p := range starts {
				if p < lastEnd || r.sentenceStart && !v.opensSentence(p) || r.sentenceStartLoose && !v.opensSentenceLoose(p) {
					continue
				}
				window := v.fold[p:min(len(v.fold), p+r.after)]
				if !containsAny(window, r.requires) {
					continue
				}
				var loc []int
				if r.keywords != nil {
					loc = r.anchored.FindSubmatchIndex(window)
				} else {
					loc = r.anchored.FindIndex(window)
				}
				if loc == nil || r.keywords != nil && (len(loc) < 4 || loc[2] < 0 || !r.keywords.Match(window[loc[2]:loc[3]])) {
					continue
				}
				lastEnd = p + loc[1]
				if r.followsRefused(v.fold, p+loc[0]) {
					continue
				}
				if quotedMention(v.fold, p+loc[0], p+loc[1]) || r.standalone && !v.standaloneAt(p+loc[0], r.noCTA) || r.offTopic && !v.offTopicAt(p+loc[0]) {
					continue
				}
				sc.addMatch(v, r.id, r.category, p+loc[0], p+loc[1])
			}
			continue
		}
		// Merge the windows around the triggers and scan each merged range
		// once, so dense triggers cost one linear pass, not one per trigger.
		for k := 0; k < len(starts); {
			ws := max(0, starts[k]-r.before)
			we := min(len(v.fold), starts[k]+r.after)
			k++
			for k < len(starts) && starts[k]-r.before <= we && we-ws < maxWindow {
				we = min(len(v.fold), max(we, starts[k]+r.after))
				k++
			}
			for ws > 0 && !utf8.RuneStart(v.fold[ws]) {
				ws--
			}
			window := v.fold[ws:we]
			if !containsAny(window, r.requires) {
				continue
			}
			var locs [][]int
			if r.keywords != nil {
				locs = r.re.FindAllSubmatchIndex(window, -1)
			} else {
				locs = r.re.FindAllIndex(window, -1)
			}
			for _, loc := range locs {
				if r.keywords != nil && (len(loc) < 4 || loc[2] < 0 || !r.keywords.Match(window[loc[2]:loc[3]])) {
					continue
				}
				if r.followsRefused(v.fold, ws+loc[0]) {
					continue
				}
				if r.sentenceStart && !v.opensSentence(ws+loc[0]) || quotedMention(v.fold, ws+loc[0], ws+loc[1]) ||
					r.standalone && !v.standaloneAt(ws+loc[0], r.noCTA) || r.offTopic && !v.offTopicAt(ws+loc[0]) {
					continue
				}
				sc.addMatch(v, r.id, r.category, ws+loc[0], ws+loc[1])
			}
		}
	}
}

// followsRefused reports whether the words just before fold[start:] are
// ones after which r's match is no finding (notAfter).
func (r *regexRule) followsRefused(fold []byte, start int) bool {
	return r.notAfter != nil && r.notAfter.Match(fold[max(0, start-32):start])
}

// scanRot13 decodes the stretches where at least three ROT13 words lie
// close together and matches the phrases in the decoded text.
func (d *detectors) scanRot13(v *view, sc *scan, hits []int) {
	const near, reach = 80, 200
	var buf []byte
	for k := 0; k < len(hits); {
		j := k + 1
		for j < len(hits) && hits[j]-hits[j-1] <= near {
			j++
		}
		if j-k < 3 {
			k = j
			continue
		}
		ws := max(0, hits[k]-reach)
		we := min(len(v.fold), hits[j-1]+reach)
		k = j
		buf = append(buf[:0], v.fold[ws:we]...)
		for i, c := range buf {
			switch {
			case c >= 'a' && c <= 'm':
				buf[i] = c + 13
			case c >= 'n' && c <= 'z':
				buf[i] = c - 13
			}
		}
		d.ac.each(buf, func(end int, id int32) {
			m := d.meta[id]
			start := end - int(m.length)
			if m.kind != kindPhrase || !boundaryOK(buf, start, end, m) {
				return
			}
			sc.addMatch(v, "encoding_evasion.rot13", EncodingEvasion, ws+start, ws+end)
		})
	}
}

// quotedMention reports whether fold[start:end] is a phrase quoted inside
// a sentence that goes on, as texts about prompt injection cite it: the
// quote holds exactly the match, a word comes before the opening quote and
// the sentence continues after the closing one ("researchers hid the
// sentence "ignore previous instructions" in white text"). A quoted phrase
// that ends its sentence ("say "ignore previous instructions".") is still
// a finding.
func quotedMention(fold []byte, start, end int) bool {
	if start < 2 || end >= len(fold) {
		return false
	}
	q := fold[start-1]
	if q != '"' && q != '`' {
		return false
	}
	i := start - 2
	for i > 0 && fold[i] == ' ' {
		i--
	}
	if !isWordByte(fold[i]) {
		return false
	}
	j := end
	for j < len(fold) && isWordByte(fold[j]) { // a prefix match's word ends later
		j++
	}
	if j < len(fold) && fold[j] == ',' {
		j++
	}
	if j >= len(fold) || fold[j] != q {
		return false
	}
	j++
	for j < len(fold) && fold[j] == ' ' {
		j++
	}
	return j < len(fold) && (isWordByte(fold[j]) || fold[j] == ',' || fold[j] == '(')
}

func containsAny(b []byte, words []string) bool {
	if len(words) == 0 {
		return true
	}
	for _, w := range words {
		if bytes.Contains(b, []byte(w)) {
			return true
		}
	}
	return false
}

// opensSentence reports whether fold[p:] starts a sentence of v: as
// opensSentenceFold of the folded view, or at the start of a line of the
// readable view, where only spaces and Markdown emphasis come before it
// (a paragraph after one that ends in "**" or "]" opens a sentence, though
// the folded view joins the two).
func (v *view) opensSentence(p int) bool {
	if opensSentenceFold(v.fold, p) {
		return true
	}
	i := v.rawIndex(int(v.foldStart[p]))
	for i > 0 {
		switch v.raw[i-1] {
		case ' ', '\t', '*', '_':
			i--
			continue
		case '\n':
			return true
		}
		return false
	}
	return true
}

// addressWords may stand between a sentence's start and the name of its
// addressee ("To the chatbot …", "For any bot …", "Hey there, helpful
// bot, …").
var addressWords = map[string]bool{"dear": true, "hey": true, "hi": true, "hello": true, "attention": true, "attn": true, "to": true, "for": true,
	"yo": true, "there": true, "the": true, "any": true, "all": true, "every": true, "each": true, "an": true, "a": true, "our": true, "my": true,
	"whichever": true, "whatever": true, "fellow": true, "helpful": true, "friendly": true}

// opensSentenceLoose is opensSentence after up to two address words
// before p.
func (v *view) opensSentenceLoose(p int) bool {
	for k := 0; k <= 2; k++ {
		if v.opensSentence(p) {
			return true
		}
		i := p
		for i > 0 && (v.fold[i-1] == ' ' || v.fold[i-1] == ',') {
			i--
		}
		j := i
		for j > 0 && isWordByte(v.fold[j-1]) {
			j--
		}
		if j == i || !addressWords[string(v.fold[j:i])] {
			return false
		}
		p = j
	}
	return v.opensSentence(p)
}

// opensSentenceFold reports whether fold[p:] starts a sentence: only
// spaces and then a boundary (start, punctuation, quote, bracket, tag end
// or an HTML comment opening) come before it.
func opensSentenceFold(fold []byte, p int) bool {
	i := p
	for i > 0 && fold[i-1] == ' ' {
		i--
	}
	// A salutation may stand before the name: "Dear assistant, …".
	for _, w := range []string{"dear", "hey", "hi", "hello", "attention", "to", "note to"} {
		if i >= len(w) && string(fold[i-len(w):i]) == w && (i == len(w) || !isWordByte(fold[i-len(w)-1])) {
			i -= len(w)
			for i > 0 && fold[i-1] == ' ' {
				i--
			}
			break
		}
	}
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRune(fold[:i])
	switch r {
	case '-':
		// A bullet or a dash, not the hyphen of "user-agent".
		return i == 1 || !isWordByte(fold[i-2])
	case '.', '!', '?', ':', ';', '>', '(', '[', '"', '\'', '*', '#', '|', '。', '！', '？', '「', '«':
		return true
	}
	return false
}

// scanLines looks for fake conversation turns at line starts in the
// readable view, where line breaks still exist.
func (d *detectors) scanLines(v *view, sc *scan) {
	if !bytes.Contains(v.fold, []byte("human")) && !bytes.Contains(v.fold, []byte("assistant")) &&
		!bytes.Contains(v.fold, []byte("##")) && !bytes.Contains(v.fold, []byte("system")) {
		return
	}
	raw := v.raw
	prevStart := -1
	for start := 0; start < len(raw); {
		end := bytes.IndexByte(raw[start:], '\n')
		if end < 0 {
			end = len(raw)
		} else {
			end += start
		}
		if n, w := lineTurn(raw[start:end]); n > 0 && !(w != "" && inLabelList(raw, prevStart, start, end)) {
			sc.addRawMatch(v, "role_override.fake_turn", RoleOverride, start, start+n)
		}
		prevStart = start
		start = end + 1
	}
}

// inLabelList reports whether the line raw[start:end] stands beside a line
// labelled with a word that is no turn ("Computer: 9 wins"): the turn word
// is then one label of a list, not a speaker.
func inLabelList(raw []byte, prevStart, start, end int) bool {
	if prevStart >= 0 && labelLine(raw[prevStart:start-1]) {
		return true
	}
	if end < len(raw) {
		next := raw[end+1:]
		if k := bytes.IndexByte(next, '\n'); k >= 0 {
			next = next[:k]
		}
		return labelLine(next)
	}
	return false
}

// labelLine reports whether line starts with "Word:" for a word that names
// no conversation turn.
func labelLine(line []byte) bool {
	line = bytes.TrimLeft(line, " \t")
	i := 0
	for i < len(line) && (line[i] >= 'a' && line[i] <= 'z' || line[i] >= 'A' && line[i] <= 'Z') {
		i++
	}
	if i < 2 || i >= len(line) || line[i] != ':' {
		return false
	}
	for _, w := range turnWords {
		if strings.EqualFold(string(line[:i]), w) {
			return false
		}
	}
	return true
}

var turnWords = []string{"human", "assistant", "system", "instruction", "response", "user"}

// lineTurn returns the length of a fake turn marker at the start of line,
// or 0, and the speaker word when the marker is a bare "Human:" or
// "Assistant:" (rather than a heading or a system turn).
func lineTurn(line []byte) (int, string) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '>' || line[i] == '*' || line[i] == '_' || line[i] == '-') {
		i++
	}
	hashes := 0
	for i < len(line) && line[i] == '#' {
		hashes++
		i++
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	rest := line[i:]
	for _, w := range turnWords {
		if len(rest) < len(w) || !strings.EqualFold(string(rest[:len(w)]), w) {
			continue
		}
		j := len(w)
		if hashes >= 2 {
			for _, suffix := range []string{" prompt", " message"} {
				if len(rest) >= j+len(suffix) && strings.EqualFold(string(rest[j:j+len(suffix)]), suffix) {
					j += len(suffix)
				}
			}
		}
		for j < len(rest) && rest[j] == ' ' {
			j++
		}
		if j >= len(rest) || rest[j] != ':' {
			continue
		}
		j++
		switch {
		case hashes >= 2:
			return i + j, ""
		case w == "human" || w == "assistant":
			// A turn carries prose; "Human: 12 wins" on a scoreboard does not.
			tail := bytes.TrimLeft(rest[j:], " \t")
			if r, _ := utf8.DecodeRune(tail); len(tail) > 0 && unicode.IsLetter(r) {
				return i + j, w
			}
		case w == "system":
			// "System: you are …" opens a fake system turn; "System: Linux"
			// in a bug report does not.
			tail := bytes.TrimLeft(rest[j:], " \t")
			if len(tail) >= 4 && strings.EqualFold(string(tail[:4]), "you ") {
				return i + j, ""
			}
		}
	}
	return 0, ""
}

// leet maps digits used as letters inside words.
func leet(c byte) byte {
	switch c {
	case '0':
		return 'o'
	case '1':
		return 'i'
	case '3':
		return 'e'
	case '4':
		return 'a'
	case '5':
		return 's'
	case '7':
		return 't'
	case '@':
		return 'a'
	case '$':
		return 's'
	}
	return 0
}

// scanTypoglycemia rewrites words whose inner letters are a shuffle of a
// phrase word, and words with digits standing in for letters (previ0us),
// then matches the phrases again on the rewritten view.
func (d *detectors) scanTypoglycemia(v *view, sc *scan) {
	var canon []byte
	var replaced []span
	fold := v.fold
	for i := 0; i < len(fold); {
		if !(fold[i] >= 'a' && fold[i] <= 'z') && leet(fold[i]) == 0 {
			i++
			continue
		}
		j := i
		letters, digits := 0, 0
		for j < len(fold) && (fold[j] >= 'a' && fold[j] <= 'z' || leet(fold[j]) != 0 && fold[j] != '@' && fold[j] != '$' || (fold[j] == '@' || fold[j] == '$') && j > i) {
			if fold[j] >= 'a' && fold[j] <= 'z' {
				letters++
			} else {
				digits++
			}
			j++
		}
		if j == i {
			i++
			continue
		}
		if j < len(fold) && fold[j] >= utf8.RuneSelf || i > 0 && (fold[i-1] >= utf8.RuneSelf || fold[i-1] >= '0' && fold[i-1] <= '9') || j < len(fold) && fold[j] >= '0' && fold[j] <= '9' {
			i = j
			continue
		}
		n := j - i
		w := fold[i:j]
		if digits > 0 {
			w = append([]byte(nil), w...)
			// A word of letters with a few digit letters, e.g. "instructi0ns".
			if letters < 3 || digits > n/2 {
				i = j
				continue
			}
			for k := range w {
				if l := leet(w[k]); l != 0 {
					w[k] = l
				}
			}
		}
		cand := w
		if n >= 5 && n <= 12 && w[0] >= 'a' && w[0] <= 'z' && w[n-1] >= 'a' && w[n-1] <= 'z' && d.typoEnds[w[0]-'a'][w[n-1]-'a'] {
			var buf [16]byte
			if c, ok := d.typo[string(typoSignatureBytes(buf[:0], w))]; ok {
				cand = []byte(c)
			}
		}
		if !bytes.Equal(cand, fold[i:j]) {
			if canon == nil {
				canon = append([]byte(nil), fold...)
			}
			copy(canon[i:j], cand)
			replaced = append(replaced, span{i, j})
		}
		i = j
	}
	if canon == nil {
		return
	}
	// Match again only near the rewritten words: a phrase holding one of
	// them lies within a phrase's length of it.
	const reach = 160
	for k := 0; k < len(replaced); {
		ws := max(0, replaced[k].start-reach)
		we := min(len(canon), replaced[k].end+reach)
		k++
		for k < len(replaced) && replaced[k].start-reach <= we {
			we = min(len(canon), replaced[k].end+reach)
			k++
		}
		for ws > 0 && !utf8.RuneStart(canon[ws]) {
			ws--
		}
		for we < len(canon) && !utf8.RuneStart(canon[we]) {
			we++
		}
		d.ac.each(canon[ws:we], func(end int, id int32) {
			m := d.meta[id]
			end += ws
			start := end - int(m.length)
			if m.kind != kindPhrase || !boundaryOK(canon, start, end, m) {
				return
			}
			for _, r := range replaced {
				if r.start < end && r.end > start {
					sc.addMatch(v, "evasion.typoglycemia", Evasion, start, end)
					return
				}
			}
		})
	}
}

func isSpacer(b byte) bool {
	return b == ' ' || b == '.' || b == '-' || b == '_' || b == '|' || b == '/' || b == ','
}

// scanSpaced finds letters written one by one ("i g n o r e  a l l",
// "I-G-N-O-R-E", "i.g.n.o.r.e") and matches them against the phrases
// without spaces. A run of at least three such letters is also read as one
// word within its sentence ("I-G-N-O-R-E the rules above"), and the phrases
// are matched again there.
func (d *detectors) scanSpaced(v *view, sc *scan) {
	fold := v.fold
	var letters []byte
	var pos []int
	var runs []spelledRun
	flush := func() {
		if len(letters) >= 8 {
			d.spaced.each(letters, func(end int, id int32) {
				n := d.spacedLen[id]
				start := end - n
				sc.addMatch(v, "evasion.spaced_letters", Evasion, pos[start], pos[end-1]+1)
			})
		}
		// A word is spelled out when its letters are joined by single
		// spacers: "a-b-c", "a.b.c", "a b c".
		for k := 0; k < len(pos); {
			j := k + 1
			for j < len(pos) && pos[j]-pos[j-1] == 2 {
				j++
			}
			if j-k >= 3 {
				runs = append(runs, spelledRun{span{pos[k], pos[j-1] + 1}, append([]byte(nil), letters[k:j]...)})
			}
			k = j
		}
		letters = letters[:0]
		pos = pos[:0]
	}
	for i := 0; i < len(fold); i++ {
		c := fold[i]
		isLetter := c >= 'a' && c <= 'z'
		single := isLetter && (i == 0 || !isWordByte(fold[i-1])) && (i+1 == len(fold) || !isWordByte(fold[i+1]))
		switch {
		case single:
			if len(pos) > 0 && i-pos[len(pos)-1] > 4 {
				flush()
			}
			letters = append(letters, c)
			pos = append(pos, i)
		case isSpacer(c):
		default:
			flush()
		}
	}
	flush()
	if len(runs) > 0 {
		d.scanSpelled(v, sc, runs)
	}
}

// spelledRun is a word spelled out letter by letter: fold[at] holds letters.
type spelledRun struct {
	at      span
	letters []byte
}

// scanSpelled writes each spelled-out word as one word and matches the
// phrases near it; only a phrase that holds such a word counts.
func (d *detectors) scanSpelled(v *view, sc *scan, runs []spelledRun) {
	const reach = 160
	fold := v.fold
	var buf []byte
	var at []int // at[i] is the fold offset of buf[i]
	var inRun []bool
	for k := 0; k < len(runs); {
		ws := max(0, runs[k].at.start-reach)
		j := k + 1
		we := min(len(fold), runs[k].at.end+reach)
		for j < len(runs) && runs[j].at.start-reach <= we {
			we = min(len(fold), runs[j].at.end+reach)
			j++
		}
		for ws > 0 && !utf8.RuneStart(fold[ws]) {
			ws--
		}
		for we < len(fold) && !utf8.RuneStart(fold[we]) {
			we++
		}
		buf, at, inRun = buf[:0], at[:0], inRun[:0]
		p := ws
		for _, r := range runs[k:j] {
			for ; p < r.at.start; p++ {
				buf, at, inRun = append(buf, fold[p]), append(at, p), append(inRun, false)
			}
			for n, c := range r.letters {
				buf, at, inRun = append(buf, c), append(at, r.at.start+2*n), append(inRun, true)
			}
			p = r.at.end
		}
		for ; p < we; p++ {
			buf, at, inRun = append(buf, fold[p]), append(at, p), append(inRun, false)
		}
		k = j
		d.ac.each(buf, func(end int, id int32) {
			m := d.meta[id]
			start := end - int(m.length)
			if m.kind != kindPhrase || !boundaryOK(buf, start, end, m) {
				return
			}
			for i := start; i < end; i++ {
				if inRun[i] {
					sc.addMatch(v, "evasion.spelled_word", Evasion, at[start], at[end-1]+1)
					return
				}
			}
		})
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf
}
