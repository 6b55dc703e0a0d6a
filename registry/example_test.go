package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
)

// The argument and setting names are constants which the schema and the
// reading code share, so the two cannot drift apart.
const (
	argText      = "text"
	settingLimit = "maxWords"
)

// wordCount is a complete tool. It embeds tool.Base, which supplies the
// defaults of the contract (available, registered function and
// instructions, no objection to its settings), and overrides what differs.
type wordCount struct {
	tool.Base
}

func newWordCount() *wordCount {
	return &wordCount{Base: tool.Base{Def: tool.Definition{
		// ID, implementation key and function name agree: lower case with
		// underscores.
		ID: "word_count",
		Function: tool.Function{
			Name: "word_count",
			// The description says only what the tool does...
			Description: "Counts the words of a text.",
			// ...and an optional argument is simply absent from required.
			// The schema builder writes the parameters the ordinary way: an
			// optional argument is simply absent from "required".
			Parameters: tool.NewSchema().
				RequiredString(argText, "The text to count.").
				MustBuild(),
		},
		Settings: tool.SettingsSchema{
			Fields: []tool.SettingField{{Name: settingLimit, Title: "Longest text", Description: "Refuse texts with more words than this."}},
		},
		VisibleIn:         tool.DefaultVisibility(),
		MinimumConfidence: policy.None, // it exposes nothing
		// Rules for the model go into the instructions, not the description.
		SystemPromptInstructions: "Use word_count instead of counting words yourself.",
	}}}
}

// OutboundData declares that the arguments go nowhere beyond Steward, so
// the tool may run in a chat which read mails.
func (*wordCount) OutboundData() policy.OutboundData { return policy.NoOutbound }

// Execute reads its argument with the argument reader, which refuses a
// wrong one with a message the model can correct itself from, and the
// setting it was configured with.
func (*wordCount) Execute(_ context.Context, args json.RawMessage, ec tool.ExecContext) (tool.Result, error) {
	a, err := tool.ReadArgs(args)
	if err != nil {
		return tool.Result{}, err
	}
	text, err := a.RequiredString(argText, tool.StringRule{})
	if err != nil {
		return tool.Result{}, err
	}
	words := len(strings.Fields(text))
	if limit, err := strconv.Atoi(ec.Settings.Get(settingLimit)); err == nil && words > limit {
		// A policy block reaches the model as plain text and the trace
		// reads BLOCKED rather than ERROR.
		return tool.Result{}, tool.Blocked(fmt.Sprintf("The text has %d words; this installation counts at most %d.", words, limit))
	}
	return tool.Result{JSON: map[string]int{"words": words}}, nil
}

// Example writes a tool, registers it, and asks the registry what a chat
// request offers.
func Example() {
	reg, errs := registry.New(registry.Options{
		Settings: &settings.Resolver{User: settings.User{"word_count": {settingLimit: "1000"}}},
	}, []tool.Tool{newWordCount()}, nil)
	if len(errs) > 0 {
		fmt.Println(errs)
		return
	}

	ctx := context.Background()
	offered, blocked := reg.Runnable(ctx, registry.Request{
		Component:   registry.ComponentChat,
		Selected:    []string{"word_count"},
		MayRunTools: true,
		Provider:    registry.Provider{Confidence: policy.Medium, CanUseTools: true},
	})
	for _, o := range offered {
		fmt.Printf("offered %s (strict %v) with %s=%s\n", o.Function.Name, o.Function.Strict(), settingLimit, o.Settings.Get(settingLimit))
		res, err := o.Tool.Execute(ctx, json.RawMessage(`{"text":"Grüße aus dem Labor"}`), tool.ExecContext{Definition: o.Definition, Settings: o.Settings})
		fmt.Println("result:", res.ModelContent(), err)
		_, err = o.Tool.Execute(ctx, json.RawMessage(`{"text":0}`), tool.ExecContext{Definition: o.Definition, Settings: o.Settings})
		fmt.Println("refused:", err)
	}
	fmt.Println("blocked:", len(blocked))
	fmt.Println(strings.Split(reg.Instructions(offered), "\n\n")[1])

	// A model which cannot call tools gets nothing, and the registry says why.
	fmt.Println(reg.OfferBlockReason(ctx, "word_count", registry.Provider{Confidence: policy.High}, registry.ComponentChat))

	// Output:
	// offered word_count (strict true) with maxWords=1000
	// result: {"words":4} <nil>
	// refused: Argument 'text' must be a non-empty string, but was 0.
	// blocked: 0
	// ## Tool `word_count`
	// Use word_count instead of counting words yourself.
	// MODEL_CANNOT_USE_TOOLS
}
