package loop

import (
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/tool"
)

// ToolSpecs returns the functions of the offered tools as an adapter offers
// them, in the same order: name, description, parameters as resolved for
// this request, and the function's strict flag.
func ToolSpecs(offered []tool.Offered) []llm.ToolSpec {
	if len(offered) == 0 {
		return nil
	}
	out := make([]llm.ToolSpec, len(offered))
	for i, o := range offered {
		out[i] = llm.ToolSpec{
			Name:        o.Function.Name,
			Description: o.Function.Description,
			Parameters:  o.Function.Parameters,
			Strict:      o.Function.Strict(),
		}
	}
	return out
}
