package llm

import (
	"net/url"
	"strings"
	"testing"
)

func TestCatalogueEntriesAreComplete(t *testing.T) {
	want := []Kind{KindOpenAI, KindAnthropic, KindGroq, KindOpenRouter, KindHuggingFace, KindMistral, KindDeepSeek, KindXAI, KindGoogle, KindTogether, KindFireworks, KindPerplexity, KindAlibaba, KindOllama, KindLMStudio, KindLlamaCpp, KindVLLM}
	got := Kinds()
	if len(got) != len(want) {
		t.Fatalf("Kinds() has %d entries, want %d", len(got), len(want))
	}
	for i, k := range want {
		if got[i] != k {
			t.Errorf("Kinds()[%d] = %q, want %q", i, got[i], k)
		}
		info, ok := k.Info()
		if !ok {
			t.Fatalf("no catalogue entry for %q", k)
		}
		u, err := url.Parse(info.DefaultBaseURL)
		if err != nil || u.Host == "" || !strings.HasSuffix(info.DefaultBaseURL, "/") {
			t.Errorf("%s: default base URL %q is not an absolute URL ending in /", k, info.DefaultBaseURL)
		}
		if info.SelfHosted != (len(info.KeyEnv) == 0) {
			t.Errorf("%s: self-hosted=%v but key variables %v", k, info.SelfHosted, info.KeyEnv)
		}
		if info.SelfHosted && info.Scheme != "SELF_HOSTED" {
			t.Errorf("%s: self-hosted kind has scheme name %q", k, info.Scheme)
		}
		if info.SelfHosted != (u.Hostname() == "localhost") {
			t.Errorf("%s: self-hosted=%v but default host %q", k, info.SelfHosted, u.Hostname())
		}
		if info.Scheme == "" || info.Title == "" {
			t.Errorf("%s: missing scheme name or title", k)
		}
	}
}

func TestCapabilityFlags(t *testing.T) {
	tests := []struct {
		kind        Kind
		model       string
		api         API
		strict      bool
		parallel    bool
		toolCalling bool
		reasoning   ReasoningField
	}{
		{KindOpenAI, "gpt-4o", ChatCompletions, true, true, true, ReasoningNone},
		{KindOpenAI, "gpt-4.1-mini", ChatCompletions, true, true, true, ReasoningNone},
		{KindOpenAI, "gpt-5", Responses, true, true, true, ReasoningResponsesItems},
		{KindOpenAI, "o4-mini", Responses, true, true, true, ReasoningResponsesItems},
		{KindOpenAI, "gpt-5.1-codex-max", Responses, true, true, true, ReasoningResponsesItems},
		{KindAnthropic, "claude-sonnet-4", Messages, true, false, true, ReasoningThinkingBlocks},
		{KindGroq, "moonshotai/kimi-k2-instruct", ChatCompletions, false, true, true, ReasoningNone},
		{KindHuggingFace, "moonshotai/Kimi-K2-Instruct-0905:groq", ChatCompletions, false, false, true, ReasoningNone},
		{KindOpenRouter, "anthropic/claude-haiku-4.5", ChatCompletions, false, true, true, ReasoningDetails},
		{KindDeepSeek, "deepseek-reasoner", ChatCompletions, false, true, true, ReasoningContent},
		{KindPerplexity, "sonar", ChatCompletions, false, false, false, ReasoningNone},
		{KindOllama, "gpt-oss:20b", ChatCompletions, false, true, true, ReasoningText},
		{KindLlamaCpp, "gpt-oss-20b", ChatCompletions, false, true, true, ReasoningContent},
		{KindVLLM, "Qwen/Qwen3-8B", ChatCompletions, false, true, true, ReasoningNone},
	}
	for _, tc := range tests {
		c := tc.kind.Capabilities(tc.model)
		if c.API != tc.api || c.EnforcesStrictToolSchemas != tc.strict || c.AcceptsParallelToolCalls != tc.parallel || c.ToolCalling != tc.toolCalling || c.Reasoning != tc.reasoning {
			t.Errorf("%s %s: got %+v", tc.kind, tc.model, c)
		}
	}
	for _, k := range Kinds() {
		if k == KindOpenAI || k == KindAnthropic {
			continue
		}
		if k.Capabilities("m").EnforcesStrictToolSchemas {
			t.Errorf("%s claims to bind tool calls to the schema", k)
		}
	}
}

func TestLookupKind(t *testing.T) {
	tests := []struct {
		in   string
		want Kind
		ok   bool
	}{
		{"openai", KindOpenAI, true},
		{"OPEN_AI", KindOpenAI, true},
		{" Groq ", KindGroq, true},
		{"hf", KindHuggingFace, true},
		{"hugging-face", KindHuggingFace, true},
		{"HuggingFace", KindHuggingFace, true},
		{"gemini", KindGoogle, true},
		{"llama.cpp", KindLlamaCpp, true},
		{"llama-cpp", KindLlamaCpp, true},
		{"lm-studio", KindLMStudio, true},
		{"LMStudio", KindLMStudio, true},
		{"open-router", KindOpenRouter, true},
		{"x", KindXAI, true},
		{"azure", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		got, ok := LookupKind(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("LookupKind(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestKindProvider(t *testing.T) {
	p := KindGroq.Provider("kimi", "", "k1")
	if p.BaseURL != "https://api.groq.com/openai/v1/" || p.APIKey != "k1" || p.Model != "kimi" || p.Kind != "groq" {
		t.Errorf("default provider: %+v", p)
	}
	p = KindOllama.Provider("qwen3", "http://127.0.0.1:9999/v1", "")
	if p.BaseURL != "http://127.0.0.1:9999/v1/" {
		t.Errorf("override not used or not slash-terminated: %q", p.BaseURL)
	}
	p = KindOpenRouter.Provider("m", "", "k")
	if p.Header["X-Title"] == "" {
		t.Errorf("OpenRouter attribution headers missing: %v", p.Header)
	}
	p.Header["X-Title"] = "changed"
	if KindOpenRouter.Provider("m", "", "k").Header["X-Title"] == "changed" {
		t.Error("a provider's header map is shared with the catalogue")
	}
	if got := KindOpenAI.Provider("gpt-4o", "", "k").WithModel("o3").Caps.API; got != Responses {
		t.Errorf("WithModel(o3) API = %s, want responses", got)
	}
}

func TestWithAPI(t *testing.T) {
	p := KindOpenAI.Provider("gpt-5", "", "k")
	q, err := WithAPI(p, ChatCompletions)
	if err != nil || q.Caps.API != ChatCompletions || q.Caps.Reasoning != ReasoningNone {
		t.Fatalf("OpenAI override to chat completions: %+v, %v", q.Caps, err)
	}
	q, err = WithAPI(KindOpenAI.Provider("gpt-4o", "", "k"), Responses)
	if err != nil || q.Caps.API != Responses || q.Caps.Reasoning != ReasoningResponsesItems {
		t.Fatalf("OpenAI override to responses: %+v, %v", q.Caps, err)
	}
	if _, err := WithAPI(KindGroq.Provider("m", "", "k"), Responses); err == nil || !strings.Contains(err.Error(), "groq") {
		t.Errorf("Groq with Responses: err = %v, want a refusal naming the kind", err)
	}
	for _, s := range []string{"chat", "chat-completions", "Responses", "messages"} {
		if _, ok := ParseAPI(s); !ok {
			t.Errorf("ParseAPI(%q) failed", s)
		}
	}
	if _, ok := ParseAPI("graphql"); ok {
		t.Error("ParseAPI accepted an unknown API")
	}
}

func TestFromEnvironment(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want Kind
		ok   bool
	}{
		{map[string]string{}, "", false},
		{map[string]string{"GROQ_API_KEY": "g", "MISTRAL_API_KEY": "m"}, KindGroq, true},
		{map[string]string{"MISTRAL_API_KEY": "m", "OPENAI_API_KEY": "o"}, KindOpenAI, true},
		{map[string]string{"OPENAI_API_KEY": "  "}, "", false},
		{map[string]string{"GOOGLE_API_KEY": "g"}, KindGoogle, true},
		{map[string]string{"HF_TOKEN": "h"}, KindHuggingFace, true},
		{map[string]string{"DASHSCOPE_API_KEY": "d"}, KindAlibaba, true},
	}
	for _, tc := range tests {
		p, ok := FromEnvironment(func(k string) string { return tc.env[k] })
		if ok != tc.ok || Kind(p.Kind) != tc.want {
			t.Errorf("env %v: got %q, %v; want %q, %v", tc.env, p.Kind, ok, tc.want, tc.ok)
		}
		if ok && p.APIKey == "" {
			t.Errorf("env %v: key not taken", tc.env)
		}
	}
}

func TestAPIKeyFrom(t *testing.T) {
	env := map[string]string{"GOOGLE_API_KEY": "g2", "GEMINI_API_KEY": " g1 ", "HUGGING_FACE_HUB_TOKEN": "h"}
	getenv := func(k string) string { return env[k] }
	tests := map[Kind]string{KindGoogle: "g1", KindHuggingFace: "h", KindOpenAI: "", KindOllama: ""}
	for k, want := range tests {
		if got := k.APIKeyFrom(getenv); got != want {
			t.Errorf("%s.APIKeyFrom = %q, want %q", k, got, want)
		}
	}
}
