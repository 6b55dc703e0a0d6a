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
	"version":                                  "the file's format version; this Steward writes 2, migrates older files and refuses newer ones rather than write over them",
	"default_provider":                         "the provider `ask` and `chat` use when `--provider` is not given: a provider kind (`openai`, `anthropic`, `ollama`, …) or the ID of a configured provider (`steward settings set default_provider …`)",
	"providers":                                "providers you configured yourself, usable by ID with `--provider` and as `default_provider`",
	"providers[].id":                           "the ID you name the provider by",
	"providers[].kind":                         "the provider kind, one of those `steward providers` lists",
	"providers[].model":                        "the model to use; empty takes `$STEWARD_MODEL` or the kind's default",
	"providers[].base_url":                     "the base URL of its API, e.g. `http://127.0.0.1:8000/v1/`; empty takes the kind's default. Its key is stored with `steward keys set <id>`",
	"tools":                                    "your tool settings by tool ID and field name, as `steward settings set TOOL.FIELD VALUE` saves them; secrets are never here but in the secret store",
	"selected_tools":                           "the tools `ask` and `chat` offer when `--tools` is not given: tool or collection IDs (`steward settings set selected_tools …`)",
	"disabled_tools":                           "tool or collection IDs you switched off",
	"minimum_confidence":                       "the minimum provider confidence you require per tool or collection ID (a level such as `HIGH`); it can only raise what the organization set",
	"enabled_preview_features":                 "preview features you switched on, e.g. `PRE_RAG_2024` and `PRE_MAILBOXES_2026` for the mail tools (`steward settings set enabled_preview_features …`)",
	"mailboxes":                                "mailboxes you added with `steward mail add`; their passwords or tokens are in the secret store (`steward mail set-secret`)",
	"mailboxes[].id":                           "the mailbox's ID",
	"mailboxes[].name":                         "its name, shown to you and to the model",
	"mailboxes[].host":                         "the IMAP server's host name",
	"mailboxes[].port":                         "the IMAP port",
	"mailboxes[].security":                     "`TLS` or `STARTTLS`",
	"mailboxes[].auth":                         "`PASSWORD` or `XOAUTH2`",
	"mailboxes[].username":                     "the sign-in name",
	"mailboxes[].folders":                      "the folders to index; empty indexes INBOX",
	"mailboxes[].embedding_provider":           "the embedding provider for search by meaning; empty searches by words only",
	"mailboxes[].required_provider_confidence": "the confidence a chat provider and the embedding provider need to read the mailbox: `VERY_LOW` to `HIGH`",
	"mailboxes[].outbound_data_restriction":    "where a chat may send data after reading from the mailbox: `UNRESTRICTED`, `ONLY_LINKS_FROM_CHAT` or `ONLY_CONFIGURED_SERVICES`",
	"mailboxes[].max_age_days":                 "index only the mails of the last N days (plus flagged mails and drafts); 0 indexes every mail",
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
			if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct {
				walk(f.Type.Elem(), path+"[].")
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
	}
	return t.Kind().String()
}
