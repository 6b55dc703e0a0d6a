package registry

import (
	"slices"

	"github.com/stewardhq/steward/tool"
)

// ComponentChat is the chat component. The chat's visibility flag applies
// to it; every other component uses the assistants flag.
const ComponentChat = "CHAT"

// components lists every component name a visibility list may use.
var components = []string{
	"NONE", "GRAMMAR_SPELLING_ASSISTANT", "ICON_FINDER_ASSISTANT", "REWRITE_ASSISTANT",
	"PROMPT_OPTIMIZER_ASSISTANT", "TRANSLATION_ASSISTANT", "AGENDA_ASSISTANT", "CODING_ASSISTANT",
	"TEXT_SUMMARIZER_ASSISTANT", "EMAIL_ASSISTANT", "LEGAL_CHECK_ASSISTANT", "SYNONYMS_ASSISTANT",
	"MY_TASKS_ASSISTANT", "JOB_POSTING_ASSISTANT", "BIAS_DAY_ASSISTANT", "ERI_ASSISTANT",
	"DOCUMENT_ANALYSIS_ASSISTANT", "SLIDE_BUILDER_ASSISTANT", "META_ASSISTANT", "I18N_ASSISTANT",
	ComponentChat, "WRITER", "APP_SETTINGS", "AGENT_TEXT_CONTENT_CLEANER", "AGENT_DATA_SOURCE_SELECTION",
	"AGENT_RETRIEVAL_CONTEXT_VALIDATION", "AGENT_ASSISTANT_PLUGIN_AUDIT", "LOG_VIEWER_ASSISTANT",
	"VISUAL_BRIEFING_ASSISTANT", "BATCH_PROCESSING_ASSISTANT",
}

// Components returns every known component name.
func Components() []string { return slices.Clone(components) }

// IsComponent reports whether name is a known component (exact match).
func IsComponent(name string) bool { return slices.Contains(components, name) }

// Visible reports whether a tool with visibility v appears in component.
// While both lists are empty, the chat flag decides for the chat and the
// assistants flag for every other component. As soon as either list has an
// entry, the lists replace the flags: an empty allow list allows every
// component, a non-empty one only its entries, and the deny list wins.
func Visible(v tool.Visibility, component string) bool {
	if len(v.Allowed) == 0 && len(v.Denied) == 0 {
		if component == ComponentChat {
			return v.Chat
		}
		return v.Assistants
	}
	allowed := len(v.Allowed) == 0 || slices.Contains(v.Allowed, component)
	return allowed && !slices.Contains(v.Denied, component)
}
