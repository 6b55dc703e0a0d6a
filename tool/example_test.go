package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// Every argument name is a constant the schema and the reading code share,
// so the two cannot drift apart.
const (
	argTerm     = "term"
	argLanguage = "language"
)

var glossaryLanguages = []string{"en", "de"}

var _ tool.Tool = (*glossary)(nil)

// glossary looks terms up in a small built-in glossary. It sends nothing
// anywhere, so it says so and runs in every chat.
type glossary struct {
	tool.Base
	entries map[string][]string
}

func newGlossary() *glossary {
	params := tool.NewSchema().
		RequiredString(argTerm, "The term to explain.").
		OptionalEnum(argLanguage, "The language of the explanation.", glossaryLanguages...).
		OptionalInteger(tool.PageArgument, tool.PageDescription).
		MustBuild()
	return &glossary{
		Base: tool.Base{Def: tool.Definition{
			ID: "explain_term",
			Function: tool.Function{
				Name:        "explain_term",
				Description: "Explains a term from the organization's glossary.",
				Parameters:  params,
			},
			VisibleIn: tool.DefaultVisibility(),
		}},
		entries: map[string][]string{
			"größe": {"Die Größe eines Objekts.", "Auch: Bedeutung.", "Siehe Maß."},
		},
	}
}

// OutboundData: the glossary is built in; nothing leaves Steward.
func (g *glossary) OutboundData() policy.OutboundData { return policy.NoOutbound }

func (g *glossary) Execute(_ context.Context, raw json.RawMessage, _ tool.ExecContext) (tool.Result, error) {
	args, err := tool.ReadArgs(raw)
	if err != nil {
		return tool.Result{}, err
	}
	if err := args.RefuseUnknown(argTerm, argLanguage, tool.PageArgument); err != nil {
		return tool.Result{}, err
	}
	term, err := args.RequiredString(argTerm, tool.StringRule{MaxChars: 100, SingleLine: true})
	if err != nil {
		return tool.Result{}, err
	}
	if _, _, err := args.OptionalChoice(argLanguage, glossaryLanguages, "for the glossary's own language"); err != nil {
		return tool.Result{}, err
	}
	const pageSize, lastPage = 2, 5
	page, err := args.Page(lastPage)
	if err != nil {
		return tool.Result{}, err
	}
	lines, info := tool.Slice(g.entries[strings.ToLower(term)], page, pageSize, lastPage)
	return tool.Result{JSON: struct {
		Term string   `json:"term"`
		Text []string `json:"text"`
		tool.PageInfo
	}{term, lines, info}}, nil
}

// Example writes a small tool: its definition with a schema written the
// ordinary way, an Execute that reads its arguments without guessing, and
// paging with page and has_more. A wrong argument is refused with a message
// the model can correct itself from.
func Example() {
	g := newGlossary()
	ctx := context.Background()
	for _, call := range []string{
		`{"term":"Größe"}`,
		`{"term":"Größe","page":2}`,
		`{"term":"Größe","page":0}`,
		`{"term":"Größe","language":"fr"}`,
		`{"term":"Größe","page":9}`,
		`{"trem":"Größe"}`,
	} {
		res, err := g.Execute(ctx, json.RawMessage(call), tool.ExecContext{})
		if err != nil {
			fmt.Println("refused:", err)
			continue
		}
		fmt.Println(res.ModelContent())
	}
	// Output:
	// {"term":"Größe","text":["Die Größe eines Objekts.","Auch: Bedeutung."],"page":1,"has_more":true}
	// {"term":"Größe","text":["Siehe Maß."],"page":2,"has_more":false}
	// refused: Argument 'page' must be a positive integer, but was 0. Leave it out to get the first page.
	// refused: Argument 'language' must be one of en, de, but was "fr". Leave it out for the glossary's own language.
	// refused: Argument 'page' must be at most 5, the last page there is, but was 9. Leave it out to get the first page.
	// refused: Argument 'trem' is not known. The known arguments are term, language, page. Leave it out or use one of those.
}

// ExampleStrictSchema shows the conversion for OpenAI's strict mode: the
// optional language becomes nullable, null joins its enum first, and
// required lists every property.
func ExampleStrictSchema() {
	params := tool.NewSchema().
		RequiredString("term", "The term.").
		OptionalEnum("language", "The language.", "en", "de").
		MustBuild()
	fmt.Println(string(params))
	strict, err := tool.StrictSchema(params)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(strict))
	// Output:
	// {"type":"object","properties":{"term":{"type":"string","description":"The term."},"language":{"type":"string","description":"The language.","enum":["en","de"]}},"required":["term"],"additionalProperties":false}
	// {"type":"object","properties":{"term":{"type":"string","description":"The term."},"language":{"type":["string","null"],"description":"The language.","enum":[null,"en","de"]}},"required":["term","language"],"additionalProperties":false}
}
