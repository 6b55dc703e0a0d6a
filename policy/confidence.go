package policy

import (
	"fmt"
	"strings"
)

// Confidence is how far an organization trusts a provider with its data.
// Levels compare numerically; higher is more trusted.
type Confidence int

// The confidence levels, with the reference implementation's numeric values.
const (
	None      Confidence = 0
	Untrusted Confidence = 1
	Unknown   Confidence = 10
	VeryLow   Confidence = 90
	Low       Confidence = 100
	Moderate  Confidence = 150
	Medium    Confidence = 200
	High      Confidence = 300
)

var confidenceNames = []struct {
	c    Confidence
	name string
}{
	{None, "NONE"}, {Untrusted, "UNTRUSTED"}, {Unknown, "UNKNOWN"}, {VeryLow, "VERY_LOW"},
	{Low, "LOW"}, {Moderate, "MODERATE"}, {Medium, "MEDIUM"}, {High, "HIGH"},
}

// Levels lists every confidence level from lowest to highest.
func Levels() []Confidence {
	out := make([]Confidence, len(confidenceNames))
	for i, n := range confidenceNames {
		out[i] = n.c
	}
	return out
}

// String returns the upper-snake name, e.g. "VERY_LOW".
func (c Confidence) String() string {
	for _, n := range confidenceNames {
		if n.c == c {
			return n.name
		}
	}
	return fmt.Sprintf("Confidence(%d)", int(c))
}

// Valid reports whether c is one of the defined levels.
func (c Confidence) Valid() bool {
	for _, n := range confidenceNames {
		if n.c == c {
			return true
		}
	}
	return false
}

// ParseConfidence reads a level name case-insensitively ("high", "VERY_LOW").
func ParseConfidence(s string) (Confidence, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.ReplaceAll(t, "-", "_")
	for _, n := range confidenceNames {
		if n.name == t {
			return n.c, nil
		}
	}
	return None, fmt.Errorf("unknown confidence level %q: use one of NONE, UNTRUSTED, UNKNOWN, VERY_LOW, LOW, MODERATE, MEDIUM, HIGH", s)
}

// MarshalText writes the level name.
func (c Confidence) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a level name.
func (c *Confidence) UnmarshalText(b []byte) error {
	v, err := ParseConfidence(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Allows reports whether a provider at level provider meets minimum. A
// minimum of NONE allows every provider.
func Allows(provider, minimum Confidence) bool {
	return minimum == None || provider >= minimum
}

// Max returns the higher of two levels.
func Max(a, b Confidence) Confidence {
	if a > b {
		return a
	}
	return b
}
