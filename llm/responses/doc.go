// Package responses is the adapter for the OpenAI Responses API
// (POST {base}responses).
//
// It turns an llm.Request into Responses input items, offers function tools
// flat ({type:"function", name, description, parameters, strict}), streams
// the answer and hands the loop one llm.Round per request. Between rounds it
// keeps the conversation itself: the whole output of a round, reasoning items
// included, goes back in the next request, followed by one
// function_call_output item per result, matched by call_id. Requests are
// stateless (store:false); for models that reason, the encrypted reasoning
// content is requested so that reasoning items can be replayed.
//
// It must not know any policy or particular tool, and it never decides what
// a call means: invalid calls and calls without a call_id are handed to the
// loop unchanged.
package responses
