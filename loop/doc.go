// Package loop is the one tool-calling loop that drives every provider, and
// the executor that runs each call the model asks for.
//
// The loop asks the model through an llm.Adapter, streams its text to a
// Sink, runs the calls one at a time in the model's order with the limits
// checked per call, records every result in the adapter's history, and asks
// again until the model answers or a limit ends the tools. When a result
// tightened the chat, the loop asks its RunContext.Reoffer hook (the app's,
// built from the registry) what the next rounds offer, so the model is never
// offered what would be refused. The executor looks a call up among the
// offered tools, re-checks the chat's outbound data restriction before every
// call, runs the tool, cuts and filters the text of a failed or blocked call
// (it may quote a server), masks sensitive arguments in the trace, and
// tightens the chat with what the result demands.
//
// The loop knows no particular tool and no provider or wire format. It must
// not decide which tools are offered (that is the registry's job), must not
// open connections itself, and must not persist anything: trace results stay
// in memory. Loop is an interface so another loop (an agent mode) can replace
// it while the adapters stay.
package loop
