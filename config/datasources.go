package config

import (
	"fmt"
	"math"
	"strings"
)

// DataSourceConfig is one entry of CONFIG["DATA_SOURCES"]: an ERI v1
// server in the reference's format, or, as Steward's addition, a local
// folder or file (Type LOCAL_DIRECTORY or LOCAL_FILE). The plugin loader
// checks the entry's shape and what the reference requires of it; the
// values themselves are validated where the data source is built (see
// package datasource), and the problem then points at Line.
type DataSourceConfig struct {
	ID, Name, Type string
	// Description is shown to the model for a local source; an ERI
	// server's own description takes its place.
	Description string
	// MaxMatches is 0 when the plugin sets none (the default applies).
	MaxMatches int
	// RequiredProviderConfidence is a level name; empty when not set.
	RequiredProviderConfidence string
	// SecurityPolicy is ALLOW_ANY or SELF_HOSTED (ERI: required).
	SecurityPolicy string

	// Path is a local folder or file.
	Path string
	// EmbeddingProviderID names an entry of EMBEDDING_PROVIDERS (or an
	// "ollama:<model>" / "openai:<model>" spec) for a local source.
	EmbeddingProviderID string
	MaxChunkTokens      int
	// ChunkOverlapTokens is nil when the plugin sets none.
	ChunkOverlapTokens *int

	// ERI fields.
	Hostname             string
	Port                 int
	AuthMethod           string
	Username             string
	UsernamePasswordMode string
	SelectedRetrievalID  string
	// Secret is the decrypted token or password.
	Secret string

	Plugin string
	// Org is true when an organization plugin defines the entry; a local
	// plugin's entries belong to the user.
	Org bool
	// File and Line locate the entry for problems found later.
	File string
	Line int
}

// dataSourceFields are the keys an entry may have.
var dataSourceFields = []string{"Id", "Name", "Type", "Description", "MaxMatches", "RequiredProviderConfidence", "SecurityPolicy",
	"Path", "EmbeddingProviderId", "MaxChunkTokens", "ChunkOverlapTokens",
	"Hostname", "Port", "AuthMethod", "Username", "UsernamePasswordMode", "SelectedRetrievalId", "Token", "Password"}

// parseDataSources reads CONFIG["DATA_SOURCES"]. An entry with a problem
// that leaves it unusable is reported and left out.
func parseDataSources(v any, plugin, file string, org bool, problem func(key, format string, a ...any), line func(key string) int, decrypt func(key, v string) string) []DataSourceConfig {
	var out []DataSourceConfig
	for i, e := range listOf(v) {
		m, ok := e.(map[string]any)
		if !ok {
			problem("DATA_SOURCES", "DATA_SOURCES[%d] must be a table", i+1)
			continue
		}
		id := str(m, "Id")
		where := firstNonEmpty(id, "DATA_SOURCES")
		bad := func(format string, a ...any) {
			problem(where, "DATA_SOURCES[%d] (%s): %s", i+1, firstNonEmpty(id, "no Id"), fmt.Sprintf(format, a...))
		}
		usable := true
		for k := range m {
			if !containsString(dataSourceFields, k) {
				bad("unknown field %q; the fields are %s", k, strings.Join(dataSourceFields, ", "))
				usable = false
			}
		}
		strField := func(k string) string {
			if x, present := m[k]; present {
				if _, isStr := x.(string); !isStr {
					bad("%s must be a string, but is %s", k, kindName(x))
					usable = false
				}
			}
			return str(m, k)
		}
		intField := func(k string) (int, bool) {
			x, present := m[k]
			if !present {
				return 0, false
			}
			f, isNum := x.(float64)
			if !isNum || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
				bad("%s must be a whole number, but is %v", k, x)
				usable = false
				return 0, false
			}
			return int(f), true
		}
		ds := DataSourceConfig{ID: id, Name: strField("Name"), Type: strings.ToUpper(strField("Type")), Description: strField("Description"),
			RequiredProviderConfidence: strField("RequiredProviderConfidence"), SecurityPolicy: strings.ToUpper(strField("SecurityPolicy")),
			Path: strField("Path"), EmbeddingProviderID: strField("EmbeddingProviderId"), Hostname: strField("Hostname"),
			AuthMethod: strings.ToUpper(strField("AuthMethod")), Username: strField("Username"), UsernamePasswordMode: strings.ToUpper(strField("UsernamePasswordMode")),
			SelectedRetrievalID: strField("SelectedRetrievalId"), Plugin: plugin, Org: org, File: file, Line: line(id)}
		strField("Id")
		ds.MaxMatches, _ = intField("MaxMatches")
		ds.MaxChunkTokens, _ = intField("MaxChunkTokens")
		ds.Port, _ = intField("Port")
		if n, ok := intField("ChunkOverlapTokens"); ok {
			ds.ChunkOverlapTokens = &n
		}
		if missing := missingFields(map[string]string{"Id": ds.ID, "Name": ds.Name, "Type": ds.Type}); len(missing) > 0 {
			bad("lacks %s", strings.Join(missing, ", "))
			continue
		}
		switch ds.Type {
		case "ERI_V1":
			// What the reference requires of an organization's ERI source.
			if missing := missingFields(map[string]string{"Hostname": ds.Hostname, "AuthMethod": ds.AuthMethod, "SelectedRetrievalId": ds.SelectedRetrievalID, "SecurityPolicy": ds.SecurityPolicy}); len(missing) > 0 {
				bad("lacks %s", strings.Join(missing, ", "))
				continue
			}
			if ds.SecurityPolicy != "ALLOW_ANY" && ds.SecurityPolicy != "SELF_HOSTED" {
				bad("SecurityPolicy must be ALLOW_ANY or SELF_HOSTED, but is %q", ds.SecurityPolicy)
				continue
			}
			for _, k := range []string{"Path", "EmbeddingProviderId", "MaxChunkTokens", "ChunkOverlapTokens"} {
				if _, present := m[k]; present {
					bad("%s is only for LOCAL_DIRECTORY and LOCAL_FILE sources", k)
					usable = false
				}
			}
			switch ds.AuthMethod {
			case "TOKEN":
				ds.Secret = secretField(m, "Token", bad, decrypt)
				if ds.Secret == "" {
					bad("AuthMethod TOKEN needs Token, encrypted as ENC:v1:...")
					continue
				}
			case "USERNAME_PASSWORD":
				switch ds.UsernamePasswordMode {
				case "SHARED_USERNAME_AND_PASSWORD":
					if ds.Username == "" {
						bad("UsernamePasswordMode SHARED_USERNAME_AND_PASSWORD needs Username")
						continue
					}
				case "OS_USERNAME_SHARED_PASSWORD":
				default:
					bad("AuthMethod USERNAME_PASSWORD needs UsernamePasswordMode SHARED_USERNAME_AND_PASSWORD or OS_USERNAME_SHARED_PASSWORD, but it is %q", ds.UsernamePasswordMode)
					continue
				}
				ds.Secret = secretField(m, "Password", bad, decrypt)
				if ds.Secret == "" {
					bad("AuthMethod USERNAME_PASSWORD needs Password, encrypted as ENC:v1:...")
					continue
				}
			}
		case "LOCAL_DIRECTORY", "LOCAL_FILE":
			if ds.Path == "" {
				bad("lacks Path, the absolute path of the folder or file")
				continue
			}
			for _, k := range []string{"Hostname", "Port", "AuthMethod", "Username", "UsernamePasswordMode", "SelectedRetrievalId", "Token", "Password"} {
				if _, present := m[k]; present {
					bad("%s is only for ERI_V1 sources", k)
					usable = false
				}
			}
			if ds.SecurityPolicy == "" {
				ds.SecurityPolicy = "ALLOW_ANY"
			}
		default:
			bad("Type must be ERI_V1, LOCAL_DIRECTORY or LOCAL_FILE, but is %q", ds.Type)
			continue
		}
		if !usable {
			continue
		}
		out = append(out, ds)
	}
	return out
}

// secretField reads a secret that must come encrypted; a plaintext value
// is refused, never used.
func secretField(m map[string]any, k string, bad func(string, ...any), decrypt func(key, v string) string) string {
	v := str(m, k)
	if v == "" {
		return ""
	}
	if !strings.HasPrefix(v, "ENC:v1:") {
		bad("%s must be encrypted as ENC:v1:...; a plaintext secret is not used", k)
		return ""
	}
	return decrypt(k, v)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// UserDataSource is a data source the user added with `steward sources
// add`, as settings.json keeps it. Its ERI secret is in the secret store,
// never here.
type UserDataSource struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Kind is LOCAL_DIRECTORY, LOCAL_FILE or ERI_V1.
	Kind        string `json:"kind"`
	Description string `json:"description,omitempty"`
	// MaxMatches is the results per page; 0 or absent means 10.
	MaxMatches                 int    `json:"max_matches,omitempty"`
	RequiredProviderConfidence string `json:"required_provider_confidence"`
	// DataSecurity is ALLOW_ANY (default) or SELF_HOSTED.
	DataSecurity string `json:"data_security,omitempty"`

	Path              string `json:"path,omitempty"`
	EmbeddingProvider string `json:"embedding_provider,omitempty"`
	MaxChunkTokens    int    `json:"max_chunk_tokens,omitempty"`
	// ChunkOverlapTokens: absent for the default (300), 0 for none.
	ChunkOverlapTokens *int `json:"chunk_overlap_tokens,omitempty"`

	Hostname             string `json:"hostname,omitempty"`
	Port                 int    `json:"port,omitempty"`
	AuthMethod           string `json:"auth_method,omitempty"`
	Username             string `json:"username,omitempty"`
	UsernamePasswordMode string `json:"username_password_mode,omitempty"`
	RetrievalID          string `json:"retrieval_id,omitempty"`
}

// DataSourceDefaults are the user's defaults for which data sources a new
// chat searches and how.
type DataSourceDefaults struct {
	// Disabled: new chats search no data source.
	Disabled bool `json:"disabled,omitempty"`
	// Selected are the sources a new chat searches; empty means every
	// source the provider may use (automatic selection).
	Selected []string `json:"selected,omitempty"`
	// Retrieval is SEMANTIC_SEARCH (default) or EVERY_MESSAGE.
	Retrieval string `json:"retrieval,omitempty"`
}
