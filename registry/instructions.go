package registry

import (
	"slices"
	"strings"

	"github.com/stewardhq/steward/tool"
)

// InstructionsHeading opens the tool instructions in the system prompt.
const InstructionsHeading = "# Tool usage instructions:"

// instructionsIntro tells the model how to treat the sections that follow.
const instructionsIntro = "Several tools are available to you, each with its own purpose and its own rules of use. " +
	"Pick the tool that fits the task, and when you are unsure, ask the user before you act. " +
	"Keep to the rules of every tool, so that your answers stay accurate and reliable. " +
	"The rules of each tool follow:"

// Instructions assembles the instructions of the offered tools for the
// system prompt: a section "## Tool `<name>`" per tool with non-blank
// instructions, in the order of offered, each distinct section once, under
// a heading which tells the model to keep to them. It returns "" when no
// tool has instructions.
func (r *Registry) Instructions(offered []tool.Offered) string {
	var sections []string
	for _, o := range offered {
		text := strings.TrimSpace(o.Instructions)
		if text == "" {
			continue
		}
		section := "## Tool `" + o.Function.Name + "`\n" + text
		if !slices.Contains(sections, section) {
			sections = append(sections, section)
		}
	}
	if len(sections) == 0 {
		return ""
	}
	return InstructionsHeading + "\n" + instructionsIntro + "\n\n" + strings.Join(sections, "\n\n")
}
