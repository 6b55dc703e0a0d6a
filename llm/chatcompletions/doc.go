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
// Every request streams. A host that ignores stream:true and answers with
// one chat.completion object (Ollama, OpenRouter and others do when asked
// without streaming) is read the same way, so the non-streaming recordings
// replay through the same path. "[DONE]" ends the read; an error event or an
// error object inside a 200 answer, a cut connection, a stream without one
// readable chunk and a stream idle for Options.IdleTimeout end the round with
// an error, never with an empty answer.
//
// It knows no policy and no particular tool, and never runs a tool itself.
package chatcompletions
