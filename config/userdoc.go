package config

import (
	"fmt"
	"reflect"
	"strings"
)

// SettingsFileField documents one field of settings.json.
type SettingsFileField struct {
	// Name is the field's JSON path, e.g. "providers[].base_url".
	Name string
	// Type is the JSON type, e.g. "string" or "list of strings".
	Type    string
	Meaning string
}

// settingsFileMeanings says what each field of settings.json means, by
// JSON path. SettingsFileFields refuses a field missing here, so a new
// field cannot go undocumented.
var settingsFileMeanings = map[string]string{
	"version":                                     "the file's format version; this Steward writes 2, migrates older files and refuses newer ones rather than write over them",
	"default_provider":                            "the provider `ask` and `chat` use when `--provider` is not given: a provider kind (`openai`, `anthropic`, `ollama`, …) or the ID of a configured provider (`steward settings set default_provider …`)",
	"providers":                                   "providers you configured yourself, usable by ID with `--provider` and as `default_provider`",
	"providers[].id":                              "the ID you name the provider by",
	"providers[].kind":                            "the provider kind, one of those `steward providers` lists",
	"providers[].model":                           "the model to use; empty takes `$STEWARD_MODEL` or the kind's default",
	"providers[].base_url":                        "the base URL of its API, e.g. `http://127.0.0.1:8000/v1/`; empty takes the kind's default. Its key is stored with `steward keys set <id>`",
	"tools":                                       "your tool settings by tool ID and field name, as `steward settings set TOOL.FIELD VALUE` saves them; secrets are never here but in the secret store",
	"selected_tools":                              "the tools `ask` and `chat` offer when `--tools` is not given: tool or collection IDs (`steward settings set selected_tools …`)",
	"disabled_tools":                              "tool or collection IDs you switched off",
	"minimum_confidence":                          "the minimum provider confidence you require per tool or collection ID (a level such as `HIGH`); it can only raise what the organization set",
	"enabled_preview_features":                    "preview features you switched on, e.g. `PRE_RAG_2024` and `PRE_MAILBOXES_2026` for the mail tools (`steward settings set enabled_preview_features …`)",
	"mailboxes":                                   "mailboxes you added with `steward mail add`; their passwords or tokens are in the secret store (`steward mail set-secret`)",
	"mailboxes[].id":                              "the mailbox's ID",
	"mailboxes[].name":                            "its name, shown to you and to the model",
	"mailboxes[].host":                            "the IMAP server's host name",
	"mailboxes[].port":                            "the IMAP port",
	"mailboxes[].security":                        "`TLS` or `STARTTLS`",
	"mailboxes[].auth":                            "`PASSWORD` or `XOAUTH2`",
	"mailboxes[].username":                        "the sign-in name",
	"mailboxes[].folders":                         "the folders to index; empty indexes INBOX",
	"mailboxes[].embedding_provider":              "the embedding provider for search by meaning; empty searches by words only",
	"mailboxes[].required_provider_confidence":    "the confidence a chat provider and the embedding provider need to read the mailbox: `VERY_LOW` to `HIGH`",
	"mailboxes[].outbound_data_restriction":       "where a chat may send data after reading from the mailbox: `UNRESTRICTED`, `ONLY_LINKS_FROM_CHAT` or `ONLY_CONFIGURED_SERVICES`",
	"mailboxes[].max_age_days":                    "index only the mails of the last N days (plus flagged mails and drafts); 0 indexes every mail",
	"data_sources":                                "your data sources (`steward sources add` writes them; see [Data sources](#data-sources) for what each field takes)",
	"data_sources[].id":                           "1–64 letters, digits, `_`, `.`, `-`",
	"data_sources[].name":                         "shown to you and the model; unique, 1–40 characters",
	"data_sources[].kind":                         "`LOCAL_DIRECTORY`, `LOCAL_FILE` or `ERI_V1`",
	"data_sources[].description":                  "what the source holds, for the model (an ERI server's own description takes its place)",
	"data_sources[].max_matches":                  "results per page, 1–65535; default 10",
	"data_sources[].required_provider_confidence": "the level the chat provider and the embedding provider must meet; default `HIGH` for a folder or file, `NONE` for ERI",
	"data_sources[].data_security":                "`ALLOW_ANY` (default), or `SELF_HOSTED` for self-hosted providers only",
	"data_sources[].path":                         "the absolute path of the folder or file (local sources)",
	"data_sources[].embedding_provider":           "`ollama:<model>[@<url>]`, `openai:<model>` or an organization embedding provider's ID; empty searches by words only",
	"data_sources[].max_chunk_tokens":             "chunk size in tokens of the embedding model, 32–8192; default the provider's token limit",
	"data_sources[].chunk_overlap_tokens":         "tokens a chunk repeats of the one before; 0 for none, absent for 300",
	"data_sources[].hostname":                     "the ERI server, `https://host[/path]`",
	"data_sources[].port":                         "the ERI server's port; default the address's or 443/80",
	"data_sources[].auth_method":                  "`NONE`, `TOKEN` or `USERNAME_PASSWORD`",
	"data_sources[].username":                     "the user name for `USERNAME_PASSWORD`",
	"data_sources[].username_password_mode":       "`USER_MANAGED` (default), or `OS_USERNAME_SHARED_PASSWORD` for the operating-system user name",
	"data_sources[].retrieval_id":                 "the ERI server's retrieval process (`steward sources show`); default the server's choice",
	"data_source_defaults":                        "which data sources a new chat searches and how",
	"data_source_defaults.disabled":               "new chats search no data source",
	"data_source_defaults.selected":               "the sources a new chat searches; empty is every source the provider may use",
	"data_source_defaults.retrieval":              "`SEMANTIC_SEARCH` (default: the model searches with semantic_search) or `EVERY_MESSAGE` (every message is searched)",
	"mcp":                                         "MCP servers you added and what `steward mcp serve` trusts its clients with (see [MCP](#mcp))",
	"mcp.client_confidence":                       "the confidence `steward mcp serve` gives a connecting MCP client; empty is UNKNOWN, and the organization's locked `DataMCP.ClientConfidence` wins",
	"mcp.servers":                                 "MCP servers whose tools Steward offers, each under its policy",
	"mcp.servers[].id":                            "the server's ID: lower-case letters and digits in words joined by `_`, at most 24",
	"mcp.servers[].name":                          "shown to people and the model; empty is the ID",
	"mcp.servers[].type":                          "`stdio`, `http` (streamable HTTP) or `sse`",
	"mcp.servers[].command":                       "what starts a stdio server",
	"mcp.servers[].args":                          "the arguments of the command",
	"mcp.servers[].env":                           "the names of the server's environment variables; their values are in the secret store",
	"mcp.servers[].url":                           "the address of an HTTP server",
	"mcp.servers[].headers":                       "the names of headers sent to an HTTP server; their values are in the secret store",
	"mcp.servers[].outbound_data":                 "where its tools' arguments go: `NONE`, `CONFIGURED_SERVICE`, `THIRD_PARTY_QUERIES` or `MODEL_CHOSEN_ADDRESSES` (the default)",
	"mcp.servers[].minimum_confidence":            "the lowest provider confidence its tools are offered to; default `NONE`",
	"mcp.servers[].untrusted_content":             "filter its descriptions and results for prompt injection; default true",
	"mcp.servers[].outbound_data_restriction":     "where a chat may still send data once the server's content reached the model, as a mailbox's",
	"mcp.servers[].result_confidence":             "the provider confidence a chat needs once the server's content reached the model",
	"mcp.servers[].data_security":                 "`SELF_HOSTED` when its content may only go to self-hosted providers",
	"mcp.servers[].enabled_tools":                 "take only these of its tools (the server's own names)",
	"mcp.servers[].disabled_tools":                "leave these of its tools out",
	"mcp.servers[].timeout_seconds":               "how long one call may take, 1 to 3600 seconds; default 60",
	"mcp.servers[].startup_timeout_seconds":       "how long starting and listing may take, 1 to 600 seconds; default 30",
	"mcp.servers[].max_result_chars":              "how much of one result reaches the model, 1 to 100000; default 30000",
	"mcp.servers[].disabled":                      "keep the server configured but unstarted",
}

// SettingsFileFields lists every field of settings.json with its type and
// meaning, read from the UserSettings type so that it cannot drift from
// what Steward reads and writes.
func SettingsFileFields() ([]SettingsFileField, error) {
	var out []SettingsFileField
	var missing []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			path := prefix + name
			meaning, ok := settingsFileMeanings[path]
			if !ok {
				missing = append(missing, path)
			}
			out = append(out, SettingsFileField{Name: path, Type: jsonTypeName(f.Type), Meaning: meaning})
			switch {
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				walk(f.Type.Elem(), path+"[].")
			case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
				walk(f.Type.Elem(), path+".")
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, path+".")
			}
		}
	}
	walk(reflect.TypeFor[UserSettings](), "")
	if len(missing) > 0 {
		return out, fmt.Errorf("settings.json fields without a meaning in settingsFileMeanings: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "list of objects"
		}
		return "list of " + jsonTypeName(t.Elem()) + "s"
	case reflect.Map:
		return "object of " + jsonTypeName(t.Elem()) + "s"
	case reflect.Struct:
		return "object"
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct {
			return "object"
		}
		return jsonTypeName(t.Elem())
	}
	return t.Kind().String()
}
