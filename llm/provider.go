package llm

// API is a wire API a provider speaks.
type API string

// The wire APIs Steward speaks.
const (
	ChatCompletions API = "chat_completions"
	Responses       API = "responses"
	Messages        API = "anthropic_messages"
)

// ReasoningField says where a host puts the model's reasoning in a Chat
// Completions stream, and so what must be sent back with the assistant turn.
type ReasoningField string

// Reasoning placements.
const (
	ReasoningNone           ReasoningField = ""
	ReasoningContent        ReasoningField = "reasoning_content"
	ReasoningText           ReasoningField = "reasoning"
	ReasoningDetails        ReasoningField = "reasoning_details"
	ReasoningThinkingBlocks ReasoningField = "thinking_blocks" // Anthropic content blocks
	ReasoningResponsesItems ReasoningField = "reasoning_items" // Responses output items
)

// Capabilities is what Steward knows about a host's behaviour.
type Capabilities struct {
	// API is the wire API.
	API API
	// EnforcesStrictToolSchemas is true only where the host's documentation
	// says it binds the model's output to the tool schema.
	EnforcesStrictToolSchemas bool
	// AcceptsParallelToolCalls is false for hosts which reject the
	// parallel_tool_calls parameter.
	AcceptsParallelToolCalls bool
	// ToolCalling is false for hosts or models that cannot call tools.
	ToolCalling bool
	// Reasoning says where reasoning travels.
	Reasoning ReasoningField
}

// Provider is a configured model endpoint.
type Provider struct {
	// ID names this instance, e.g. "openai" or an organization's ID.
	ID string
	// Kind is the provider kind, e.g. "openai", "ollama".
	Kind string
	// BaseURL ends with "/", e.g. "https://api.openai.com/v1/".
	BaseURL string
	APIKey  string
	Model   string
	// Caps are the host's capabilities for this model.
	Caps Capabilities
	// Header are extra headers the host wants (OpenRouter's HTTP-Referer).
	Header map[string]string
}
