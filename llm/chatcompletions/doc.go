// Package chatcompletions is the adapter for the OpenAI Chat Completions API
// and every host that speaks it (Groq, OpenRouter, Hugging Face, Mistral,
// DeepSeek, xAI, Google's OpenAI endpoint, Together, Fireworks, Alibaba,
// Ollama, LM Studio, llama.cpp, vLLM…).
//
// It builds the request (tools nested under "function", strict mode only on
// hosts that bind it, parallel_tool_calls false where the host takes it),
// accumulates the streamed answer into text, tool calls, reasoning and usage,
// and keeps the tool conversation of one run: the assistant turn with its
// reasoning where the host needs it back, and one role "tool" message per
// result.
//
// It knows no policy and no particular tool, and never runs a tool itself.
package chatcompletions
