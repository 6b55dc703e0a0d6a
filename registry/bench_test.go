package registry

import (
	"context"
	"fmt"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
)

// BenchmarkRunnable50 decides the runnable set with 50 registered tools:
// one collection of five, a context tool, tools with settings, and half of
// them selected.
func BenchmarkRunnable50(b *testing.B) {
	var tools []tool.Tool
	var selected []string
	user := settings.User{}
	for i := range 50 {
		id := fmt.Sprintf("tool_%02d", i)
		f := newFake(id, func(d *tool.Definition) {
			d.Settings = tool.SettingsSchema{Fields: []tool.SettingField{{Name: "url"}, {Name: "mode", Enum: []string{"a", "b"}}}, Required: []string{"url"}}
			d.SystemPromptInstructions = "Use " + id + " wisely."
			d.MinimumConfidence = policy.Low
			if i == 7 {
				d.Activation = tool.Context
			}
		})
		user[id] = map[string]string{"url": "https://example.test/" + id}
		tools = append(tools, f)
		if i%2 == 0 {
			selected = append(selected, id)
		}
	}
	cols := []Collection{{ID: "group", ToolIDs: []string{"tool_10", "tool_11", "tool_12", "tool_13", "tool_14"}, MinimumConfidence: policy.VeryLow}}
	pol := settings.Policy{DisabledIDs: []string{"tool_20"}, Confidence: settings.ConfidenceOverrides{User: map[string]policy.Confidence{"tool_30": policy.High}}}
	r := mustNew(b, Options{Policy: pol, Settings: &settings.Resolver{User: user}}, tools, cols)
	req := Request{Component: ComponentChat, Selected: selected, MayRunTools: true, Provider: capable, Chat: chatView{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		offered, _ := r.Runnable(ctx, req)
		if len(offered) == 0 {
			b.Fatal("nothing offered")
		}
	}
}
