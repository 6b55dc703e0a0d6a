package config

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataSourcesInTheReferenceFormat(t *testing.T) {
	secretBytes := make([]byte, 32)
	rand.Read(secretBytes)
	secret := base64.StdEncoding.EncodeToString(secretBytes)
	salt := make([]byte, 16)
	rand.Read(salt)
	token, _ := Encrypt("eri-token-1", secret, salt)
	password, _ := Encrypt("eri-pass-1", secret, salt)
	root := t.TempDir()
	file := writePlugin(t, root, "org", "ds", `CONFIG["DATA_SOURCES"] = {}
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = {
  ["Id"] = "hr", ["Name"] = "HR handbook", ["Type"] = "ERI_V1", ["Hostname"] = "https://eri.example.org", ["Port"] = 443,
  ["AuthMethod"] = "TOKEN", ["Token"] = "`+token+`", ["SecurityPolicy"] = "SELF_HOSTED", ["SelectedRetrievalId"] = "bm25", ["MaxMatches"] = 20 }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = {
  ["Id"] = "wiki", ["Name"] = "Wiki", ["Type"] = "ERI_V1", ["Hostname"] = "https://wiki-eri.example.org",
  ["AuthMethod"] = "USERNAME_PASSWORD", ["UsernamePasswordMode"] = "OS_USERNAME_SHARED_PASSWORD", ["Password"] = "`+password+`",
  ["SecurityPolicy"] = "ALLOW_ANY", ["SelectedRetrievalId"] = "hybrid" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = {
  ["Id"] = "share", ["Name"] = "Team share", ["Type"] = "LOCAL_DIRECTORY", ["Path"] = "/srv/share", ["Description"] = "Team documents",
  ["RequiredProviderConfidence"] = "HIGH", ["EmbeddingProviderId"] = "company-embeddings", ["ChunkOverlapTokens"] = 0 }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "plain", ["Name"] = "P", ["Type"] = "ERI_V1", ["Hostname"] = "https://x",
  ["AuthMethod"] = "TOKEN", ["Token"] = "plaintext-token", ["SecurityPolicy"] = "ALLOW_ANY", ["SelectedRetrievalId"] = "a" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "noproc", ["Name"] = "N", ["Type"] = "ERI_V1", ["Hostname"] = "https://x",
  ["AuthMethod"] = "NONE", ["SecurityPolicy"] = "ALLOW_ANY" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "unspec", ["Name"] = "U", ["Type"] = "ERI_V1", ["Hostname"] = "https://x",
  ["AuthMethod"] = "NONE", ["SecurityPolicy"] = "NOT_SPECIFIED", ["SelectedRetrievalId"] = "a" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "usermanaged", ["Name"] = "M", ["Type"] = "ERI_V1", ["Hostname"] = "https://x",
  ["AuthMethod"] = "USERNAME_PASSWORD", ["UsernamePasswordMode"] = "USER_MANAGED", ["Password"] = "`+password+`", ["SecurityPolicy"] = "ALLOW_ANY", ["SelectedRetrievalId"] = "a" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "typo", ["Name"] = "T", ["Type"] = "LOCAL_FILE", ["Path"] = "/x.pdf", ["MaxMatch"] = 5 }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "frac", ["Name"] = "F", ["Type"] = "LOCAL_FILE", ["Path"] = "/x.pdf", ["MaxMatches"] = 2.5 }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "wiki2", ["Name"] = "W", ["Type"] = "WIKI" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "mixed", ["Name"] = "X", ["Type"] = "LOCAL_DIRECTORY", ["Path"] = "/x", ["Hostname"] = "https://x" }
CONFIG["SETTINGS"]["DataChat.PreselectedDataSourceIds"] = { "hr" }
CONFIG["SETTINGS"]["DataChat.PreselectedDataSourcesRetrievalMode"] = "EVERY_MESSAGE"
`)
	eff, err := Load(context.Background(), root, Options{Getenv: func(k string) string {
		if k == EncryptionSecretEnv {
			return secret
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range eff.DataSources {
		got = append(got, d.ID)
	}
	if strings.Join(got, ",") != "hr,wiki,share" {
		t.Fatalf("loaded %v; problems %v", got, eff.Problems)
	}
	hr, wiki, share := eff.DataSources[0], eff.DataSources[1], eff.DataSources[2]
	if hr.Secret != "eri-token-1" || hr.Port != 443 || hr.MaxMatches != 20 || hr.SecurityPolicy != "SELF_HOSTED" || hr.SelectedRetrievalID != "bm25" || hr.Line == 0 || hr.File != file {
		t.Fatalf("hr %+v", hr)
	}
	if wiki.Secret != "eri-pass-1" || wiki.UsernamePasswordMode != "OS_USERNAME_SHARED_PASSWORD" {
		t.Fatalf("wiki %+v", wiki)
	}
	if share.Path != "/srv/share" || share.ChunkOverlapTokens == nil || *share.ChunkOverlapTokens != 0 || share.SecurityPolicy != "ALLOW_ANY" || share.RequiredProviderConfidence != "HIGH" {
		t.Fatalf("share %+v", share)
	}
	want := map[string]string{
		"plain":       "Token must be encrypted as ENC:v1:",
		"noproc":      "lacks SelectedRetrievalId",
		"unspec":      "SecurityPolicy must be ALLOW_ANY or SELF_HOSTED",
		"usermanaged": "needs UsernamePasswordMode SHARED_USERNAME_AND_PASSWORD or OS_USERNAME_SHARED_PASSWORD",
		"typo":        `unknown field "MaxMatch"`,
		"frac":        "MaxMatches must be a whole number, but is 2.5",
		"wiki2":       "Type must be ERI_V1, LOCAL_DIRECTORY or LOCAL_FILE",
		"mixed":       "Hostname is only for ERI_V1 sources",
	}
	probs := problemsFor(eff, file)
	for id, says := range want {
		found := false
		for _, p := range probs {
			if strings.Contains(p.Message, "("+id+")") && strings.Contains(p.Message, says) && p.Line > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem for %s saying %q in %v", id, says, probs)
		}
	}
	for _, p := range probs {
		if strings.Contains(p.Message, "plaintext-token") || strings.Contains(p.Message, "eri-pass") {
			t.Fatalf("a problem shows a secret: %v", p)
		}
	}
	if m := eff.Settings["DataChat.PreselectedDataSourcesRetrievalMode"]; m.Value != "EVERY_MESSAGE" || !m.Locked {
		t.Fatalf("%+v", m)
	}
	if ids := eff.StringList("DataChat.PreselectedDataSourceIds"); len(ids) != 1 || ids[0] != "hr" {
		t.Fatal(ids)
	}

	// A wrong retrieval mode is refused with what is allowed.
	bad := writePlugin(t, t.TempDir(), "org", "bad", `CONFIG["SETTINGS"]["DataChat.PreselectedDataSourcesRetrievalMode"] = "SOMETIMES"`+"\n")
	_, probs2, err := LoadPlugin(context.Background(), bad, true, Options{})
	if err != nil || len(probs2) != 1 || !strings.Contains(probs2[0].Message, "SEMANTIC_SEARCH") {
		t.Fatalf("%v %v", probs2, err)
	}
}

func TestUserDataSourcesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	zero := 0
	s := &UserSettings{DataSources: []UserDataSource{{ID: "docs", Name: "Docs", Kind: "LOCAL_DIRECTORY", Path: "/home/me/docs", RequiredProviderConfidence: "HIGH", ChunkOverlapTokens: &zero}},
		DataSourceDefaults: DataSourceDefaults{Retrieval: "EVERY_MESSAGE"}}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "secret") || !strings.Contains(string(b), `"data_sources"`) {
		t.Fatalf("%s", b)
	}
	back, err := LoadUserSettings(path)
	if err != nil || len(back.DataSources) != 1 || *back.DataSources[0].ChunkOverlapTokens != 0 || back.DataSourceDefaults.Retrieval != "EVERY_MESSAGE" {
		t.Fatalf("%+v %v", back, err)
	}
	empty := &UserSettings{}
	empty.Save(path)
	b, _ = os.ReadFile(path)
	if strings.Contains(string(b), "data_source") {
		t.Fatalf("empty defaults are left out: %s", b)
	}
}
