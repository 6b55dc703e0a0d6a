package datasource

import (
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/policy"
)

func folder(id string) Source {
	return Source{ID: id, Name: "Docs " + id, Kind: LocalFolder, MaxMatches: 10, RequiredConfidence: policy.Medium, Security: policy.AllowAny, Path: "/home/me/" + id}
}

func eriSource(id, host string) Source {
	return Source{ID: id, Name: "ERI " + id, Kind: ERI, MaxMatches: 10, RequiredConfidence: policy.None, Security: policy.AllowAny, Hostname: host, Auth: AuthNone}
}

// Every field is validated with an error that names it and says what is
// allowed.
func TestValidateNamesTheFieldAndWhatIsAllowed(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Source)
		field string
		says  string
	}{
		{"blank id", func(s *Source) { s.ID = "" }, "id", "letters, digits"},
		{"id with slash", func(s *Source) { s.ID = "a/b" }, "id", "letters, digits"},
		{"long id", func(s *Source) { s.ID = strings.Repeat("a", 65) }, "id", "1 to 64"},
		{"no name", func(s *Source) { s.Name = " " }, "name", "1 to 40"},
		{"long name", func(s *Source) { s.Name = strings.Repeat("n", 41) }, "name", "1 to 40"},
		{"name with line break", func(s *Source) { s.Name = "a\nb" }, "name", "one line"},
		{"kind", func(s *Source) { s.Kind = "WIKI" }, "kind", "LOCAL_DIRECTORY, LOCAL_FILE or ERI_V1"},
		{"description", func(s *Source) { s.Description = strings.Repeat("d", 2001) }, "description", "2000"},
		{"description control", func(s *Source) { s.Description = "a\x00b" }, "description", "control"},
		{"max matches zero", func(s *Source) { s.MaxMatches = 0 }, "max_matches", "1 to 65535"},
		{"max matches huge", func(s *Source) { s.MaxMatches = 70000 }, "max_matches", "1 to 65535"},
		{"confidence", func(s *Source) { s.RequiredConfidence = 42 }, "required_provider_confidence", "VERY_LOW"},
		{"local none", func(s *Source) { s.RequiredConfidence = policy.None }, "required_provider_confidence", "must name the level"},
		{"security", func(s *Source) { s.Security = policy.NotSpecified }, "data_security", "ALLOW_ANY or SELF_HOSTED"},
		{"no path", func(s *Source) { s.Path = "" }, "path", "absolute path"},
		{"relative path", func(s *Source) { s.Path = "docs" }, "path", "absolute, clean"},
		{"unclean path", func(s *Source) { s.Path = "/home/me/../x" }, "path", "absolute, clean"},
		{"chunk", func(s *Source) { s.MaxChunkTokens = 8 }, "max_chunk_tokens", "32 to 8192"},
		{"overlap", func(s *Source) { s.MaxChunkTokens = 100; s.ChunkOverlapTokens = 100 }, "chunk_overlap_tokens", "at most 99"},
		{"eri field on folder", func(s *Source) { s.Hostname = "https://x" }, "hostname", "only an ERI_V1 source"},
		{"port on folder", func(s *Source) { s.Port = 443 }, "port", "only an ERI_V1 source"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := folder("docs")
			tc.edit(&s)
			err := s.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a field error, got %v", err)
			}
			if fe.Field != tc.field || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "data source") {
				t.Fatalf("field %q, message %q; want field %q saying %q", fe.Field, err, tc.field, tc.says)
			}
		})
	}
	if err := folder("docs").Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateERI(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Source)
		field string
		says  string
	}{
		{"no hostname", func(s *Source) { s.Hostname = "" }, "hostname", "needs its server's address"},
		{"plain http elsewhere", func(s *Source) { s.Hostname = "http://eri.example.org" }, "hostname", "unencrypted"},
		{"ftp", func(s *Source) { s.Hostname = "ftp://eri.example.org" }, "hostname", "https://host"},
		{"user info", func(s *Source) { s.Hostname = "https://u:p@eri.example.org" }, "hostname", "without user name"},
		{"query", func(s *Source) { s.Hostname = "https://eri.example.org/?a=1" }, "hostname", "query"},
		{"port range", func(s *Source) { s.Port = 70000 }, "port", "1 to 65535"},
		{"two ports", func(s *Source) { s.Hostname = "https://eri.example.org:8443"; s.Port = 443 }, "port", "already names port 8443"},
		{"kerberos", func(s *Source) { s.Auth = AuthKerberos }, "auth_method", "not supported yet"},
		{"no auth", func(s *Source) { s.Auth = "" }, "auth_method", "NONE, USERNAME_PASSWORD or TOKEN"},
		{"bad auth", func(s *Source) { s.Auth = "OAUTH" }, "auth_method", "NONE, USERNAME_PASSWORD or TOKEN"},
		{"user for token", func(s *Source) { s.Auth = AuthToken; s.Username = "x" }, "username", "only USERNAME_PASSWORD"},
		{"no user", func(s *Source) { s.Auth = AuthUsernamePassword }, "username", "needs the user name"},
		{"bad mode", func(s *Source) { s.Auth = AuthUsernamePassword; s.Username = "a"; s.UsernameMode = "X" }, "username_password_mode", "USER_MANAGED"},
		{"path on eri", func(s *Source) { s.Path = "/x" }, "path", "has no path"},
		{"embedding on eri", func(s *Source) { s.Embedding = "ollama:x" }, "embedding_provider", "embeds on its own"},
		{"retrieval id", func(s *Source) { s.RetrievalID = "a\nb" }, "retrieval_id", "retrieval processes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := eriSource("hr", "https://eri.example.org")
			tc.edit(&s)
			err := s.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v; want field %q saying %q", err, tc.field, tc.says)
			}
		})
	}
	ok := eriSource("hr", "http://127.0.0.1:8080/api")
	ok.Auth, ok.Username, ok.UsernameMode = AuthUsernamePassword, "", OSUsernameSharedPassword
	if err := ok.Validate(); err != nil {
		t.Fatalf("http on loopback with the OS user name: %v", err)
	}
	u, err := ok.BaseURL()
	if err != nil || u.String() != "http://127.0.0.1:8080/api/" {
		t.Fatalf("base URL %v %v", u, err)
	}
	s := eriSource("hr", "https://eri.example.org")
	s.Port = 8443
	if u, _ := s.BaseURL(); u.String() != "https://eri.example.org:8443/" {
		t.Fatalf("port from the field: %v", u)
	}
	s.Port = 0
	if u, _ := s.BaseURL(); u.String() != "https://eri.example.org:443/" {
		t.Fatalf("the scheme's port: %v", u)
	}
}

func TestValidateAllRefusesDuplicates(t *testing.T) {
	a, b, c := folder("a"), folder("b"), folder("A")
	b.Name = strings.ToUpper(a.Name)
	errs := ValidateAll([]Source{a, b, c})
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "names must be unique") || !strings.Contains(errs[1].Error(), "has this ID already") {
		t.Fatalf("%v", errs)
	}
}

func TestSortByNumberThenID(t *testing.T) {
	s := []Source{{ID: "b", Number: 2}, {ID: "c", Number: 1}, {ID: "a", Number: 2}}
	Sort(s)
	if s[0].ID != "c" || s[1].ID != "a" || s[2].ID != "b" {
		t.Fatalf("%v", s)
	}
	if k, err := ParseKind("folder"); err != nil || k != LocalFolder {
		t.Fatal(k, err)
	}
	if _, err := ParseKind("wiki"); err == nil || !strings.Contains(err.Error(), "LOCAL_FILE") {
		t.Fatal(err)
	}
}
