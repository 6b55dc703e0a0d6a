package llm

import (
	"fmt"
	"strings"
)

// Kind names a provider kind: a hosted API or a self-hosted server.
type Kind string

// The provider kinds Steward knows.
const (
	KindOpenAI      Kind = "openai"
	KindAnthropic   Kind = "anthropic"
	KindGroq        Kind = "groq"
	KindOpenRouter  Kind = "openrouter"
	KindHuggingFace Kind = "huggingface"
	KindMistral     Kind = "mistral"
	KindDeepSeek    Kind = "deepseek"
	KindXAI         Kind = "xai"
	KindGoogle      Kind = "google"
	KindTogether    Kind = "together"
	KindFireworks   Kind = "fireworks"
	KindPerplexity  Kind = "perplexity"
	KindAlibaba     Kind = "alibaba"
	KindOllama      Kind = "ollama"
	KindLMStudio    Kind = "lmstudio"
	KindLlamaCpp    Kind = "llamacpp"
	KindVLLM        Kind = "vllm"
)

// KindInfo is what the catalogue knows about a provider kind.
type KindInfo struct {
	Kind Kind
	// Title is the human name, e.g. "Hugging Face".
	Title string
	// DefaultBaseURL ends with "/"; a configured base URL replaces it.
	DefaultBaseURL string
	// KeyEnv lists the environment variables the key is usually found in,
	// first match wins. Self-hosted servers need none.
	KeyEnv []string
	// SelfHosted is true for servers the organization runs itself.
	SelfHosted bool
	// Scheme is the provider name the confidence schemes use ("OPEN_AI",
	// "SELF_HOSTED", …); it equals one of the policy.Provider* names, kept
	// as a string because llm does not import policy.
	Scheme string
	// Header are extra headers the host wants on every request.
	Header map[string]string
	// caps are the capabilities for a model of this kind, apart from
	// OpenAI's per-model API choice.
	caps Capabilities
}

// The catalogue. Each capability flag is backed by the host's documentation
// (cited beside it). Common ground for every entry unless stated otherwise:
//
//   - EnforcesStrictToolSchemas is false: only OpenAI and Anthropic document
//     that they bind the model's tool calls to the schema. Other hosts at most
//     validate the call afterwards (Groq rejects a call that omits a
//     "required" property, so a strict-converted schema would break optional
//     arguments there).
//   - AcceptsParallelToolCalls is true: the parameter belongs to the Chat
//     Completions request (https://platform.openai.com/docs/api-reference/chat/create#chat-create-parallel_tool_calls)
//     and OpenAI-compatible hosts take or ignore it. Hugging Face is the
//     exception the seed names: its router answers 400.
//   - ToolCalling is true: every host documents function calling through
//     "tools" (links per entry), Perplexity aside.
//   - Reasoning names the field that must travel back with the assistant
//     turn. The Chat Completions adapter collects reasoning_content,
//     reasoning and reasoning_details from every host; only the field named
//     here is sent back, because strict hosts reject unknown message fields.
var catalogue = []KindInfo{
	{
		Kind: KindOpenAI, Title: "OpenAI", DefaultBaseURL: "https://api.openai.com/v1/",
		KeyEnv: []string{"OPENAI_API_KEY"}, Scheme: "OPEN_AI",
		// Strict mode makes function calls follow the schema exactly
		// rather than on a best-effort basis:
		// https://platform.openai.com/docs/guides/function-calling#strict-mode
		// (same guarantee in Structured Outputs:
		// https://platform.openai.com/docs/guides/structured-outputs).
		// parallel_tool_calls: https://platform.openai.com/docs/guides/function-calling#parallel-function-calling
		// API and reasoning are chosen per model, see OpenAIAPIForModel.
		caps: Capabilities{API: ChatCompletions, EnforcesStrictToolSchemas: true, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
	{
		Kind: KindAnthropic, Title: "Anthropic", DefaultBaseURL: "https://api.anthropic.com/v1/",
		KeyEnv: []string{"ANTHROPIC_API_KEY"}, Scheme: "ANTHROPIC",
		// Messages API; strict tool use guarantees schema conformance
		// without conversion: https://docs.claude.com/en/docs/build-with-claude/structured-outputs
		// No parallel_tool_calls parameter (it has disable_parallel_tool_use
		// instead): https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use#parallel-tool-use
		// Thinking blocks go back unchanged with their signatures:
		// https://docs.claude.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks
		caps: Capabilities{API: Messages, EnforcesStrictToolSchemas: true, AcceptsParallelToolCalls: false, ToolCalling: true, Reasoning: ReasoningThinkingBlocks},
	},
	{
		Kind: KindGroq, Title: "Groq", DefaultBaseURL: "https://api.groq.com/openai/v1/",
		KeyEnv: []string{"GROQ_API_KEY"}, Scheme: "GROQ",
		// Tool use and parallel_tool_calls: https://console.groq.com/docs/tool-use
		// Groq validates calls against the schema and fails them with
		// tool_use_failed, it does not bind generation (same page).
		// Reasoning arrives in "reasoning" (https://console.groq.com/docs/reasoning);
		// Groq rejects unknown assistant-message properties, and its models
		// do not need the reasoning back, so none is returned.
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true, Reasoning: ReasoningNone},
	},
	{
		Kind: KindOpenRouter, Title: "OpenRouter", DefaultBaseURL: "https://openrouter.ai/api/v1/",
		KeyEnv: []string{"OPENROUTER_API_KEY"}, Scheme: "OPEN_ROUTER",
		// Tool calling: https://openrouter.ai/docs/features/tool-calling
		// reasoning_details must be passed back unmodified with tool calls
		// ("Preserving reasoning blocks"):
		// https://openrouter.ai/docs/use-cases/reasoning-tokens#preserving-reasoning-blocks
		// App attribution headers: https://openrouter.ai/docs/api-reference/overview#headers
		Header: map[string]string{"HTTP-Referer": "https://github.com/stewardhq/steward", "X-Title": "Steward"},
		caps:   Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true, Reasoning: ReasoningDetails},
	},
	{
		Kind: KindHuggingFace, Title: "Hugging Face", DefaultBaseURL: "https://router.huggingface.co/v1/",
		KeyEnv: []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}, Scheme: "HUGGINGFACE",
		// OpenAI-compatible router with tools:
		// https://huggingface.co/docs/inference-providers/tasks/chat-completion
		// parallel_tool_calls is not among its documented parameters and
		// the router answers it with 400 (seed, "Provider API Shapes").
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: false, ToolCalling: true},
	},
	{
		Kind: KindMistral, Title: "Mistral", DefaultBaseURL: "https://api.mistral.ai/v1/",
		KeyEnv: []string{"MISTRAL_API_KEY"}, Scheme: "MISTRAL",
		// Function calling and parallel_tool_calls:
		// https://docs.mistral.ai/capabilities/function_calling/
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
	{
		Kind: KindDeepSeek, Title: "DeepSeek", DefaultBaseURL: "https://api.deepseek.com/",
		KeyEnv: []string{"DEEPSEEK_API_KEY"}, Scheme: "DEEP_SEEK",
		// Function calling: https://api-docs.deepseek.com/guides/function_calling
		// (its strict mode exists only on the beta endpoint). In thinking
		// mode the reasoning_content of a turn with tool calls must be sent
		// back, or the API answers 400:
		// https://api-docs.deepseek.com/guides/thinking_mode
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true, Reasoning: ReasoningContent},
	},
	{
		Kind: KindXAI, Title: "xAI", DefaultBaseURL: "https://api.x.ai/v1/",
		KeyEnv: []string{"XAI_API_KEY"}, Scheme: "X",
		// Function calling: https://docs.x.ai/docs/guides/function-calling
		// reasoning_content is output only:
		// https://docs.x.ai/docs/guides/reasoning
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
	{
		Kind: KindGoogle, Title: "Google", DefaultBaseURL: "https://generativelanguage.googleapis.com/v1beta/openai/",
		KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Scheme: "GOOGLE",
		// OpenAI compatibility with function calling:
		// https://ai.google.dev/gemini-api/docs/openai
		// Thought signatures travel in tool_calls[].extra_content, which the
		// adapter keeps: https://ai.google.dev/gemini-api/docs/thought-signatures
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
	{
		Kind: KindTogether, Title: "Together AI", DefaultBaseURL: "https://api.together.xyz/v1/",
		KeyEnv: []string{"TOGETHER_API_KEY"}, Scheme: "TOGETHER",
		// Function calling: https://docs.together.ai/docs/function-calling
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
	{
		Kind: KindFireworks, Title: "Fireworks AI", DefaultBaseURL: "https://api.fireworks.ai/inference/v1/",
		KeyEnv: []string{"FIREWORKS_API_KEY"}, Scheme: "FIREWORKS",
		// Function calling: https://docs.fireworks.ai/guides/function-calling
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
	{
		Kind: KindPerplexity, Title: "Perplexity", DefaultBaseURL: "https://api.perplexity.ai/",
		KeyEnv: []string{"PERPLEXITY_API_KEY"}, Scheme: "PERPLEXITY",
		// The Sonar chat API lists no "tools" parameter among its OpenAI
		// compatible fields: https://docs.perplexity.ai/guides/chat-completions-guide
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: false, ToolCalling: false},
	},
	{
		Kind: KindAlibaba, Title: "Alibaba Cloud", DefaultBaseURL: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1/",
		KeyEnv: []string{"DASHSCOPE_API_KEY"}, Scheme: "ALIBABA_CLOUD",
		// Function calling with parallel_tool_calls:
		// https://www.alibabacloud.com/help/en/model-studio/qwen-function-calling
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
	{
		Kind: KindOllama, Title: "Ollama", DefaultBaseURL: "http://localhost:11434/v1/", SelfHosted: true, Scheme: "SELF_HOSTED",
		// OpenAI compatibility, tools and the "reasoning" field:
		// https://docs.ollama.com/api/openai-compatibility
		// Ollama streams every call at index 0 with a new id; the adapter
		// keeps them apart.
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true, Reasoning: ReasoningText},
	},
	{
		Kind: KindLMStudio, Title: "LM Studio", DefaultBaseURL: "http://localhost:1234/v1/", SelfHosted: true, Scheme: "SELF_HOSTED",
		// Tool use over the OpenAI-compatible endpoint:
		// https://lmstudio.ai/docs/app/api/tools
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
	{
		Kind: KindLlamaCpp, Title: "llama.cpp", DefaultBaseURL: "http://localhost:8080/v1/", SelfHosted: true, Scheme: "SELF_HOSTED",
		// Function calling (needs --jinja) and reasoning_content:
		// https://github.com/ggml-org/llama.cpp/blob/master/docs/function-calling.md
		// https://github.com/ggml-org/llama.cpp/tree/master/tools/server#post-v1chatcompletions-openai-compatible-chat-completions-api
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true, Reasoning: ReasoningContent},
	},
	{
		Kind: KindVLLM, Title: "vLLM", DefaultBaseURL: "http://localhost:8000/v1/", SelfHosted: true, Scheme: "SELF_HOSTED",
		// Tool calling (needs --enable-auto-tool-choice):
		// https://docs.vllm.ai/en/latest/features/tool_calling.html
		// Reasoning output is read-only:
		// https://docs.vllm.ai/en/latest/features/reasoning_outputs.html
		caps: Capabilities{API: ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true},
	},
}

// Kinds returns every provider kind in catalogue order.
func Kinds() []Kind {
	out := make([]Kind, len(catalogue))
	for i, e := range catalogue {
		out[i] = e.Kind
	}
	return out
}

var kindAliases = map[string]Kind{
	"open_ai": KindOpenAI, "hf": KindHuggingFace, "hugging_face": KindHuggingFace,
	"open_router": KindOpenRouter, "deep_seek": KindDeepSeek, "x": KindXAI, "grok": KindXAI,
	"gemini": KindGoogle, "alibaba_cloud": KindAlibaba, "dashscope": KindAlibaba, "qwen": KindAlibaba,
	"lm_studio": KindLMStudio, "llama_cpp": KindLlamaCpp, "llama.cpp": KindLlamaCpp,
	"together_ai": KindTogether, "fireworks_ai": KindFireworks,
}

// LookupKind finds a kind by name, case-insensitively; "-" and "_" count
// the same and a few common spellings are accepted ("hf", "gemini",
// "llama.cpp", "lm-studio", "OPEN_AI").
func LookupKind(name string) (Kind, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.ReplaceAll(n, "-", "_")
	if k, ok := kindAliases[n]; ok {
		return k, true
	}
	n = strings.ReplaceAll(n, "_", "")
	for _, e := range catalogue {
		if string(e.Kind) == n {
			return e.Kind, true
		}
	}
	return "", false
}

// Info returns the catalogue entry of k; ok is false for an unknown kind.
func (k Kind) Info() (KindInfo, bool) {
	for _, e := range catalogue {
		if e.Kind == k {
			e.KeyEnv = append([]string(nil), e.KeyEnv...)
			if e.Header != nil {
				h := make(map[string]string, len(e.Header))
				for hk, hv := range e.Header {
					h[hk] = hv
				}
				e.Header = h
			}
			return e, true
		}
	}
	return KindInfo{}, false
}

// Capabilities returns what the host of kind k can do with model.
func (k Kind) Capabilities(model string) Capabilities {
	info, ok := k.Info()
	if !ok {
		// An unknown kind gets the most careful OpenAI-compatible reading.
		return Capabilities{API: ChatCompletions, ToolCalling: true}
	}
	c := info.caps
	if k == KindOpenAI {
		c.API = OpenAIAPIForModel(model)
		if c.API == Responses {
			c.Reasoning = ReasoningResponsesItems
		}
	}
	return c
}

// OpenAIAPIForModel picks the wire API for an OpenAI model when the
// configuration does not say. Responses is used for:
//
//   - reasoning models (o1, o3, o4-mini…, gpt-5…), because only Responses
//     carries their reasoning items across tool rounds; OpenAI recommends it
//     for them: https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context
//   - models served only by Responses (codex, computer-use, deep research,
//     the -pro models), as the model pages list their endpoints:
//     https://platform.openai.com/docs/models
//
// Every other model (gpt-4o, gpt-4.1, gpt-3.5…) uses Chat Completions.
// WithAPI overrides the choice.
func OpenAIAPIForModel(model string) API {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-5"),
		strings.Contains(m, "codex"),
		strings.HasPrefix(m, "computer-use"),
		strings.Contains(m, "deep-research"),
		len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9':
		return Responses
	}
	return ChatCompletions
}

// ParseAPI reads an API name as written in configuration:
// "chat_completions" (or "chat"), "responses", "anthropic_messages" (or
// "messages").
func ParseAPI(s string) (API, bool) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_") {
	case "chat_completions", "chat", "chatcompletions":
		return ChatCompletions, true
	case "responses":
		return Responses, true
	case "anthropic_messages", "messages":
		return Messages, true
	}
	return "", false
}

// Provider builds a provider of kind k for model. An empty baseURLOverride
// takes the kind's default; a trailing "/" is added when missing. apiKey may
// be empty for self-hosted servers.
func (k Kind) Provider(model, baseURLOverride, apiKey string) Provider {
	info, _ := k.Info()
	base := strings.TrimSpace(baseURLOverride)
	if base == "" {
		base = info.DefaultBaseURL
	}
	if base != "" && !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return Provider{
		ID:      string(k),
		Kind:    string(k),
		BaseURL: base,
		APIKey:  apiKey,
		Model:   model,
		Caps:    k.Capabilities(model),
		Header:  info.Header,
	}
}

// WithAPI returns p speaking api instead of the catalogue's choice. Only
// OpenAI offers a choice (Chat Completions or Responses); any other change
// is refused with an error naming what the kind speaks.
func WithAPI(p Provider, api API) (Provider, error) {
	k := Kind(p.Kind)
	native := k.Capabilities(p.Model).API
	if api == native {
		return p, nil
	}
	if k == KindOpenAI && (api == ChatCompletions || api == Responses) {
		p.Caps.API = api
		p.Caps.Reasoning = ReasoningNone
		if api == Responses {
			p.Caps.Reasoning = ReasoningResponsesItems
		}
		return p, nil
	}
	return p, fmt.Errorf("provider kind %q speaks %s only, not %s", p.Kind, native, api)
}

// WithModel returns p for another model, with the capabilities the
// catalogue gives that model (OpenAI's API choice depends on it). Providers
// of unknown kinds keep their capabilities.
func (p Provider) WithModel(model string) Provider {
	p.Model = model
	if _, ok := Kind(p.Kind).Info(); ok {
		p.Caps = Kind(p.Kind).Capabilities(model)
	}
	return p
}

// APIKeyFrom returns the key of kind k from the first of its usual
// environment variables that is set, or "" (always "" for self-hosted
// kinds, which need none). getenv is usually os.Getenv.
func (k Kind) APIKeyFrom(getenv func(string) string) string {
	v, _ := k.APIKeyEnv(getenv)
	return v
}

// APIKeyEnv is APIKeyFrom together with the name of the variable the key
// came from; both are "" when none is set.
func (k Kind) APIKeyEnv(getenv func(string) string) (key, variable string) {
	info, _ := k.Info()
	for _, env := range info.KeyEnv {
		if v := strings.TrimSpace(getenv(env)); v != "" {
			return v, env
		}
	}
	return "", ""
}

// FromEnvironment picks the first hosted kind whose API key is set, in
// catalogue order (OpenAI, Anthropic, Groq, OpenRouter, Hugging Face,
// Mistral, DeepSeek, xAI, Google, Together, Fireworks, Perplexity, Alibaba),
// and returns its provider with an empty model for the caller to fill in.
// Self-hosted kinds need no key and are never picked this way. getenv is
// usually os.Getenv.
func FromEnvironment(getenv func(string) string) (Provider, bool) {
	for _, e := range catalogue {
		if e.SelfHosted {
			continue
		}
		if v := e.Kind.APIKeyFrom(getenv); v != "" {
			return e.Kind.Provider("", "", v), true
		}
	}
	return Provider{}, false
}
