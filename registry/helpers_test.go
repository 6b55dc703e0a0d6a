package registry

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// fake is a configurable tool for the tests.
type fake struct {
	tool.Base
	unavailable bool
	outbound    policy.OutboundData
	enforces    bool
	validate    func(tool.Settings) error
	resolveFn   func(context.Context, tool.ResolveContext) (*tool.Function, error)
	resolveIn   func(context.Context, tool.ResolveContext) (string, error)
	instrAsked  *int
}

func (f *fake) IsAvailable() bool                 { return !f.unavailable }
func (f *fake) OutboundData() policy.OutboundData { return f.outbound }
func (f *fake) EnforcesOutboundRestriction() bool { return f.enforces }
func (f *fake) ValidateConfiguration(_ context.Context, s tool.Settings) error {
	if f.validate != nil {
		return f.validate(s)
	}
	return nil
}
func (f *fake) ResolveFunction(ctx context.Context, rc tool.ResolveContext) (*tool.Function, error) {
	if f.resolveFn != nil {
		return f.resolveFn(ctx, rc)
	}
	return f.Base.ResolveFunction(ctx, rc)
}
func (f *fake) ResolveInstructions(ctx context.Context, rc tool.ResolveContext) (string, error) {
	if f.instrAsked != nil {
		*f.instrAsked++
	}
	if f.resolveIn != nil {
		return f.resolveIn(ctx, rc)
	}
	return f.Base.ResolveInstructions(ctx, rc)
}
func (f *fake) Execute(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
	return tool.Result{Text: "ok"}, nil
}

const objectSchema = `{"type":"object","properties":{}}`

// def returns a valid definition whose ID, key and function name agree.
func def(id string) tool.Definition {
	return tool.Definition{
		ID: id,
		Function: tool.Function{
			Name:        id,
			Description: "Does " + id + ".",
			Parameters:  json.RawMessage(objectSchema),
		},
		VisibleIn: tool.DefaultVisibility(),
	}
}

// newFake returns a fake tool with the default definition of id, changed
// by edit when given. It counts as a configured service so the outbound
// check passes unless a test changes it.
func newFake(id string, edit func(*tool.Definition)) *fake {
	d := def(id)
	if edit != nil {
		edit(&d)
	}
	return &fake{Base: tool.Base{Def: d}, outbound: policy.ConfiguredService}
}

// chatView is a ChatView with a fixed outbound requirement.
type chatView struct{ req policy.OutboundRequirement }

func (chatView) IsWebAddressGiven(string) bool                     { return false }
func (c chatView) OutboundRequirement() policy.OutboundRequirement { return c.req }
func (chatView) RequiredConfidence() policy.Confidence             { return policy.None }

var capable = Provider{Confidence: policy.Medium, CanUseTools: true}

func mustNew(t testing.TB, opts Options, tools []tool.Tool, cols []Collection) *Registry {
	t.Helper()
	r, errs := New(opts, tools, cols)
	if len(errs) > 0 {
		t.Fatalf("New: %v", errs)
	}
	return r
}

func offeredIDs(o []tool.Offered) []string {
	out := make([]string, len(o))
	for i, x := range o {
		out[i] = x.Definition.ID
	}
	return out
}

func blockFor(blocked []Block, id string) (Block, bool) {
	i := slices.IndexFunc(blocked, func(b Block) bool { return b.ToolID == id })
	if i < 0 {
		return Block{}, false
	}
	return blocked[i], true
}
