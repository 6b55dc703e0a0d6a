package config

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
)

func TestPromptInjectionSettings(t *testing.T) {
	secretBytes := make([]byte, 32)
	rand.Read(secretBytes)
	secret := base64.StdEncoding.EncodeToString(secretBytes)
	salt := make([]byte, 16)
	rand.Read(salt)
	enc, err := Encrypt("classifier-key-1", secret, salt)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == EncryptionSecretEnv {
			return secret
		}
		return ""
	}
	root := t.TempDir()
	writePlugin(t, root, "org", "guard", `CONFIG["SETTINGS"]["DataPromptInjection.ClassifierUrl"] = "https://classifier.example.org/v1/classify"
CONFIG["SETTINGS"]["DataPromptInjection.ClassifierApiKey"] = "`+enc+`"
CONFIG["SETTINGS"]["DataPromptInjection.ClassifierThreshold"] = "0.7"
CONFIG["SETTINGS"]["DataPromptInjection.ClassifierTimeoutSeconds"] = "5"
CONFIG["SETTINGS"]["DataPromptInjection.UseLocalClassifier"] = false
`)
	eff, err := Load(context.Background(), root, Options{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if len(eff.Problems) > 0 {
		t.Fatalf("problems: %v", eff.Problems)
	}
	for key, want := range map[string]any{
		"DataPromptInjection.ClassifierUrl":            "https://classifier.example.org/v1/classify",
		"DataPromptInjection.ClassifierApiKey":         "classifier-key-1",
		"DataPromptInjection.ClassifierThreshold":      "0.7",
		"DataPromptInjection.ClassifierTimeoutSeconds": "5",
		"DataPromptInjection.UseLocalClassifier":       false,
	} {
		if got := eff.Settings[key].Value; got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}

	for _, tc := range []struct{ line, want string }{
		{`CONFIG["SETTINGS"]["DataPromptInjection.ClassifierUrl"] = "ftp://classifier.example.org/"`, "http or https address"},
		{`CONFIG["SETTINGS"]["DataPromptInjection.ClassifierUrl"] = "https://user:pw@classifier.example.org/"`, "without a user name"},
		{`CONFIG["SETTINGS"]["DataPromptInjection.ClassifierThreshold"] = "1.5"`, "above 0 and at most 1"},
		{`CONFIG["SETTINGS"]["DataPromptInjection.ClassifierThreshold"] = "high"`, "above 0 and at most 1"},
		{`CONFIG["SETTINGS"]["DataPromptInjection.ClassifierTimeoutSeconds"] = "0"`, "from 1 to 120"},
		{`CONFIG["SETTINGS"]["DataPromptInjection.ClassifierApiKey"] = "plain-key"`, "ENC:v1"},
		{`CONFIG["SETTINGS"]["DataPromptInjection.UseLocalClassifier"] = "no"`, "true or false"},
	} {
		root := t.TempDir()
		writePlugin(t, root, "org", "bad", tc.line+"\n")
		eff, err := Load(context.Background(), root, Options{Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		if len(eff.Problems) != 1 || !strings.Contains(eff.Problems[0].Message, tc.want) {
			t.Errorf("%s: problems %v, want one naming %q", tc.line, eff.Problems, tc.want)
		}
		if strings.Contains(eff.Problems[0].Message, "plain-key") {
			t.Errorf("a problem repeats the secret: %v", eff.Problems[0])
		}
		if len(eff.Settings) != 0 {
			t.Errorf("%s: the refused value was kept: %v", tc.line, eff.Settings)
		}
	}
}
