package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/zalando/go-keyring"
)

// SecretStore keeps secrets by service and key, e.g. ("tool::web_search",
// "tavily.apiKey"). Implementations never log values.
type SecretStore interface {
	Get(service, key string) (string, bool, error)
	Set(service, key, value string) error
	Delete(service, key string) error
	// Where says where secrets are kept, for messages to the user.
	Where() string
}

// keyringService prefixes every service name in the OS keyring.
const keyringService = "steward::"

// OpenSecretStore returns the OS keyring when one answers, or else a file
// in dir readable only by the user. With a keyring, secrets stored in the
// file while no keyring answered are still read (and moved to the keyring
// when set again).
func OpenSecretStore(dir string) SecretStore {
	file := &FileSecrets{Path: filepath.Join(dir, "secrets.json")}
	if _, err := keyring.Get(keyringService+"probe", "probe"); err == nil || errors.Is(err, keyring.ErrNotFound) {
		return &layeredSecrets{primary: osKeyring{}, fallback: file}
	}
	return file
}

// SecretLocator is a SecretStore that can say which of its places holds a
// secret.
type SecretLocator interface {
	// Locate names where the secret is kept ("" when it is not stored).
	Locate(service, key string) (where string, err error)
}

// LocateSecret names where a store keeps a secret, e.g. "the OS keyring"
// or the secrets file's path; "" when none is stored. It never returns the
// value.
func LocateSecret(s SecretStore, service, key string) (string, error) {
	if l, ok := s.(SecretLocator); ok {
		return l.Locate(service, key)
	}
	_, ok, err := s.Get(service, key)
	if err != nil || !ok {
		return "", err
	}
	return s.Where(), nil
}

// layeredSecrets writes to the keyring and reads the keyring first, then
// the file.
type layeredSecrets struct {
	primary  SecretStore
	fallback SecretStore
}

func (l *layeredSecrets) Get(service, key string) (string, bool, error) {
	v, ok, err := l.primary.Get(service, key)
	if err != nil || ok {
		return v, ok, err
	}
	return l.fallback.Get(service, key)
}

func (l *layeredSecrets) Set(service, key, value string) error {
	if err := l.primary.Set(service, key, value); err != nil {
		return err
	}
	// One place per secret: the file's copy goes once the keyring has it.
	if _, ok, err := l.fallback.Get(service, key); err == nil && ok {
		return l.fallback.Delete(service, key)
	}
	return nil
}

func (l *layeredSecrets) Delete(service, key string) error {
	if err := l.primary.Delete(service, key); err != nil {
		return err
	}
	if _, ok, err := l.fallback.Get(service, key); err == nil && ok {
		return l.fallback.Delete(service, key)
	}
	return nil
}

func (l *layeredSecrets) Where() string { return l.primary.Where() }

func (l *layeredSecrets) Locate(service, key string) (string, error) {
	for _, s := range []SecretStore{l.primary, l.fallback} {
		_, ok, err := s.Get(service, key)
		if err != nil {
			return "", err
		}
		if ok {
			return s.Where(), nil
		}
	}
	return "", nil
}

type osKeyring struct{}

func (osKeyring) Get(service, key string) (string, bool, error) {
	v, err := keyring.Get(keyringService+service, key)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading the keyring: %w", err)
	}
	return v, true, nil
}

func (osKeyring) Set(service, key, value string) error {
	return keyring.Set(keyringService+service, key, value)
}

func (osKeyring) Delete(service, key string) error {
	err := keyring.Delete(keyringService+service, key)
	if errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}

func (osKeyring) Where() string { return "the OS keyring" }

// FileSecrets keeps secrets in a JSON file with mode 0600, for machines
// without a keyring.
type FileSecrets struct {
	Path string
	mu   sync.Mutex
}

func (f *FileSecrets) read() (map[string]map[string]string, error) {
	m := map[string]map[string]string{}
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(f.Path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable by others (mode %v): run chmod 600 on it", f.Path, fi.Mode().Perm())
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: fix or remove it", f.Path)
	}
	return m, nil
}

// Get returns a secret.
func (f *FileSecrets) Get(service, key string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.read()
	if err != nil {
		return "", false, err
	}
	v, ok := m[service][key]
	return v, ok, nil
}

// Set stores a secret; an empty value deletes it.
func (f *FileSecrets) Set(service, key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.read()
	if err != nil {
		return err
	}
	if value == "" {
		delete(m[service], key)
	} else {
		if m[service] == nil {
			m[service] = map[string]string{}
		}
		m[service][key] = value
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return WriteFileAtomic(f.Path, b, 0o600)
}

// Delete removes a secret.
func (f *FileSecrets) Delete(service, key string) error { return f.Set(service, key, "") }

// Where names the file.
func (f *FileSecrets) Where() string { return f.Path + " (readable only by you)" }
