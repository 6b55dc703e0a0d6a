package eri

import (
	"fmt"
	"slices"

	"github.com/stewardhq/steward/internal/textcut"
)

// AuthMethod is a sign-in method of the spec.
type AuthMethod string

// The sign-in methods.
const (
	AuthNone             AuthMethod = "NONE"
	AuthKerberos         AuthMethod = "KERBEROS"
	AuthUsernamePassword AuthMethod = "USERNAME_PASSWORD"
	AuthToken            AuthMethod = "TOKEN"
)

// AuthField is a field a sign-in method needs.
type AuthField string

// The authentication fields.
const (
	FieldNone           AuthField = "NONE"
	FieldUsername       AuthField = "USERNAME"
	FieldPassword       AuthField = "PASSWORD"
	FieldToken          AuthField = "TOKEN"
	FieldKerberosTicket AuthField = "KERBEROS_TICKET"
)

// ContentType is the type of a content block or a context.
type ContentType string

// The content types.
const (
	ContentNone    ContentType = "NONE"
	ContentUnknown ContentType = "UNKNOWN"
	ContentText    ContentType = "TEXT"
	ContentImage   ContentType = "IMAGE"
	ContentVideo   ContentType = "VIDEO"
	ContentAudio   ContentType = "AUDIO"
	ContentSpeech  ContentType = "SPEECH"
)

// Role is the author of a content block.
type Role string

// The roles.
const (
	RoleNone    Role = "NONE"
	RoleUnknown Role = "UNKNOWN"
	RoleSystem  Role = "SYSTEM"
	RoleUser    Role = "USER"
	RoleAI      Role = "AI"
	RoleAgent   Role = "AGENT"
)

// ProviderType is which providers may process a server's data.
type ProviderType string

// The provider types.
const (
	// ProviderNone: no provider may process the data.
	ProviderNone ProviderType = "NONE"
	// ProviderAny: every provider may.
	ProviderAny ProviderType = "ANY"
	// ProviderSelfHosted: only self-hosted providers may.
	ProviderSelfHosted ProviderType = "SELF_HOSTED"
)

var (
	authMethods   = []AuthMethod{AuthNone, AuthKerberos, AuthUsernamePassword, AuthToken}
	authFields    = []AuthField{FieldNone, FieldUsername, FieldPassword, FieldToken, FieldKerberosTicket}
	contentTypes  = []ContentType{ContentNone, ContentUnknown, ContentText, ContentImage, ContentVideo, ContentAudio, ContentSpeech}
	providerTypes = []ProviderType{ProviderNone, ProviderAny, ProviderSelfHosted}
)

// AuthScheme is one sign-in method a server offers (the spec's AuthScheme).
type AuthScheme struct {
	AuthMethod AuthMethod `json:"authMethod"`
	// AuthFieldMappings say under which names the server expects the
	// fields of the method, e.g. the password in a header "password".
	AuthFieldMappings []AuthFieldMapping `json:"authFieldMappings"`
}

// AuthFieldMapping maps a field to its name in the sign-in request.
type AuthFieldMapping struct {
	AuthField AuthField `json:"authField"`
	FieldName string    `json:"fieldName"`
}

// AuthResponse is the server's answer to a sign-in. Success and Token may
// be missing; see Client.SignIn.
type AuthResponse struct {
	Success *bool  `json:"success"`
	Token   string `json:"token"`
	Message string `json:"message"`
}

// DataSourceInfo is what the server says about its data source.
type DataSourceInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// EmbeddingInfo describes an embedding the server uses.
type EmbeddingInfo struct {
	EmbeddingType string `json:"embeddingType"`
	EmbeddingName string `json:"embeddingName"`
	Description   string `json:"description"`
	UsedWhen      string `json:"usedWhen"`
	Link          string `json:"link"`
}

// RetrievalInfo describes one retrieval process of the server.
type RetrievalInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Link        string `json:"link"`
	// ParametersDescription maps parameter names to what they mean.
	ParametersDescription map[string]string `json:"parametersDescription"`
	Embeddings            []EmbeddingInfo   `json:"embeddings"`
}

// SecurityRequirements are the server's demands on providers.
type SecurityRequirements struct {
	AllowedProviderType ProviderType `json:"allowedProviderType"`
}

// ContentBlock is one block of the chat thread sent with a retrieval.
type ContentBlock struct {
	Content string      `json:"content"`
	Role    Role        `json:"role"`
	Type    ContentType `json:"type"`
}

// ChatThread is the chat sent with a retrieval.
type ChatThread struct {
	ContentBlocks []ContentBlock `json:"contentBlocks"`
}

// RetrievalRequest asks the server for passages.
type RetrievalRequest struct {
	LatestUserPrompt     string      `json:"latestUserPrompt"`
	LatestUserPromptType ContentType `json:"latestUserPromptType"`
	Thread               ChatThread  `json:"thread"`
	// RetrievalProcessID is sent as null when empty: the server chooses.
	RetrievalProcessID string `json:"-"`
	// Parameters are sent as null when empty.
	Parameters map[string]string `json:"-"`
	// MaxMatches is how many contexts to return; below 1 asks for as many
	// as the server finds fitting.
	MaxMatches int `json:"maxMatches"`
}

// Context is one passage a retrieval returned.
type Context struct {
	Name               string      `json:"name"`
	Category           string      `json:"category"`
	Path               string      `json:"path"`
	Type               ContentType `json:"type"`
	MatchedContent     string      `json:"matchedContent"`
	SurroundingContent []string    `json:"surroundingContent"`
	Links              []string    `json:"links"`
}

// wire is the request as sent: camelCase, with nulls where the spec
// allows them for what was left out.
type wireRequest struct {
	LatestUserPrompt     string            `json:"latestUserPrompt"`
	LatestUserPromptType ContentType       `json:"latestUserPromptType"`
	Thread               ChatThread        `json:"thread"`
	RetrievalProcessID   *string           `json:"retrievalProcessId"`
	Parameters           map[string]string `json:"parameters"`
	MaxMatches           int               `json:"maxMatches"`
}

func (r RetrievalRequest) wire() wireRequest {
	w := wireRequest{LatestUserPrompt: r.LatestUserPrompt, LatestUserPromptType: r.LatestUserPromptType, Thread: r.Thread, MaxMatches: r.MaxMatches}
	if w.LatestUserPromptType == "" {
		w.LatestUserPromptType = ContentText
	}
	if w.Thread.ContentBlocks == nil {
		w.Thread.ContentBlocks = []ContentBlock{}
	}
	if r.RetrievalProcessID != "" {
		id := r.RetrievalProcessID
		w.RetrievalProcessID = &id
	}
	if len(r.Parameters) > 0 {
		w.Parameters = r.Parameters
	}
	return w
}

// checkEnum reports a value outside the spec's enum, naming the field.
// An empty value (null or missing) is accepted.
func checkEnum[T ~string](field string, v T, allowed []T) error {
	if v == "" || slices.Contains(allowed, v) {
		return nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return fmt.Errorf("%s is %q, which ERI v1 does not define (allowed: %v)", field, textcut.Chars(string(v), 40), names)
}
