package config

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// EncPrefix marks a value encrypted by the organization's IT.
const EncPrefix = "ENC:v1:"

// EncryptionSecretEnv names the environment variable holding the
// organization's configuration encryption secret: 32 bytes, base64.
const EncryptionSecretEnv = "STEWARD_CONFIG_ENCRYPTION_SECRET"

// IsEncrypted reports whether v carries the ENC:v1: prefix.
func IsEncrypted(v string) bool { return strings.HasPrefix(v, EncPrefix) }

// Decrypt decrypts an ENC:v1: value: base64(salt16 || AES-256-CBC/PKCS7
// ciphertext), key and IV from PBKDF2-HMAC-SHA512(secret, salt, 10000): the
// first 32 bytes the key, the next 16 the IV. secret is the base64 text of
// the 32-byte organization secret. Errors never contain the value.
func Decrypt(value, secret string) (string, error) {
	if !IsEncrypted(value) {
		return "", errors.New("the value is not encrypted (it must start with ENC:v1:); plaintext secrets are not accepted from plugins")
	}
	if secret == "" {
		return "", fmt.Errorf("the value is encrypted but %s is not set", EncryptionSecretEnv)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(secret))
	if err != nil || len(key) != 32 {
		return "", fmt.Errorf("%s must be 32 bytes written as base64", EncryptionSecretEnv)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(value, EncPrefix))
	if err != nil || len(raw) < 16+aes.BlockSize || (len(raw)-16)%aes.BlockSize != 0 {
		return "", errors.New("the encrypted value is malformed (expected base64 of a 16-byte salt and AES-CBC blocks)")
	}
	salt, ct := raw[:16], raw[16:]
	dk, err := pbkdf2.Key(sha512.New, string(key), salt, 10000, 48)
	if err != nil {
		return "", err
	}
	block, err := aes.NewCipher(dk[:32])
	if err != nil {
		return "", err
	}
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, dk[32:48]).CryptBlocks(pt, ct)
	n := int(pt[len(pt)-1])
	if n == 0 || n > aes.BlockSize || n > len(pt) {
		return "", errors.New("the encrypted value could not be decrypted with this secret")
	}
	for _, b := range pt[len(pt)-n:] {
		if int(b) != n {
			return "", errors.New("the encrypted value could not be decrypted with this secret")
		}
	}
	return string(pt[:len(pt)-n]), nil
}

// Encrypt produces an ENC:v1: value; it is what an organization's tooling
// does, offered for tests and for `steward config encrypt`.
func Encrypt(plain, secret string, salt []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(secret))
	if err != nil || len(key) != 32 {
		return "", fmt.Errorf("%s must be 32 bytes written as base64", EncryptionSecretEnv)
	}
	if len(salt) != 16 {
		return "", errors.New("the salt must be 16 bytes")
	}
	dk, err := pbkdf2.Key(sha512.New, string(key), salt, 10000, 48)
	if err != nil {
		return "", err
	}
	block, _ := aes.NewCipher(dk[:32])
	n := aes.BlockSize - len(plain)%aes.BlockSize
	pt := append([]byte(plain), []byte(strings.Repeat(string(rune(n)), n))...)
	ct := make([]byte, len(pt))
	cipher.NewCBCEncrypter(block, dk[32:48]).CryptBlocks(ct, pt)
	return EncPrefix + base64.StdEncoding.EncodeToString(append(append([]byte{}, salt...), ct...)), nil
}
