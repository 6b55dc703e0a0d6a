// Package anthropic is the adapter for the Anthropic Messages API
// (POST {base}messages).
//
// It turns an llm.Request into a Messages request, offers tools as
// {name, description, input_schema, strict}, streams the answer and hands
// the loop one llm.Round per request. Between rounds it keeps the
// conversation itself: the model's turn goes back exactly as received, its
// thinking and redacted_thinking blocks with their signatures untouched, and
// all results of a round go back together in one user message of
// tool_result blocks.
//
// It must not know any policy or particular tool, and it never decides what
// a call means: invalid calls are handed to the loop, marked invalid.
package anthropic
