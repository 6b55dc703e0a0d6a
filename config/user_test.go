package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUserSettingsMigrateFromVersion1(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(p, []byte(`{"version":1,"tool_settings":{"web_search.maxResults":"7","read_web_page.freeAddressChoice":"ON"},"selected_tools":["web_search"]}`), 0o600)
	s, err := LoadUserSettings(p)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.ToolValue("web_search", "maxResults"); v != "7" {
		t.Fatalf("migrated value: %+v", s.Tools)
	}
	if v, _ := s.ToolValue("read_web_page", "freeAddressChoice"); v != "ON" || s.SelectedTools[0] != "web_search" {
		t.Fatalf("migrated: %+v", s)
	}
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `"version": 2`) || strings.Contains(string(b), "tool_settings") {
		t.Fatalf("saved file: %s", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
}

func TestUserSettingsRefusals(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"newer":   `{"version":99}`,
		"garbage": `{"version":`,
		"unknown": `{"version":2,"colour":"blue"}`,
		"badflat": `{"version":1,"tool_settings":{"nodot":"x"}}`,
	} {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := LoadUserSettings(p); err == nil {
			t.Errorf("%s: must be refused", name)
		}
	}
	if s, err := LoadUserSettings(filepath.Join(dir, "missing.json")); err != nil || s.Version != UserSettingsVersion {
		t.Fatalf("a missing file gives empty settings: %v %v", s, err)
	}
}

func TestFileSecrets(t *testing.T) {
	f := &FileSecrets{Path: filepath.Join(t.TempDir(), "secrets.json")}
	if err := f.Set("tool::web_search", "tavily.apiKey", "tvly-secret"); err != nil {
		t.Fatal(err)
	}
	v, ok, err := f.Get("tool::web_search", "tavily.apiKey")
	if err != nil || !ok || v != "tvly-secret" {
		t.Fatalf("get: %q %v %v", v, ok, err)
	}
	if fi, _ := os.Stat(f.Path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("secrets file mode %v", fi.Mode().Perm())
	}
	os.Chmod(f.Path, 0o644)
	if _, _, err := f.Get("tool::web_search", "tavily.apiKey"); err == nil || strings.Contains(err.Error(), "tvly") {
		t.Fatalf("a world-readable secrets file must be refused without echoing: %v", err)
	}
	os.Chmod(f.Path, 0o600)
	if err := f.Delete("tool::web_search", "tavily.apiKey"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.Get("tool::web_search", "tavily.apiKey"); ok {
		t.Fatal("deleted secret still there")
	}
}
