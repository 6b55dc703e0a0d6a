package guard

import (
	"encoding/base64"
	"unicode"
	"unicode/utf8"
)

// Caps on the work spent on encoded carriers per text.
const (
	minBase64Len     = 16
	minHexPairs      = 8
	maxCarriers      = 12
	maxDecodedBytes  = 12000
	minPrintableRate = 0.85
)

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// scanCarriers looks for base64 and hex runs in the readable view that decode
// to printable text holding an instruction; such a carrier is redacted whole.
func (d *detectors) scanCarriers(v *view, sc *scan) {
	raw := v.raw
	candidates, budget := 0, maxDecodedBytes
	// Only carriers whose start decodes to printable text count against
	// the caps, so binary data (images, hashes) cannot use them up.
	try := func(rule string, start, end int, decoded []byte) {
		if !printable(decoded[:min(len(decoded), 48)]) {
			return
		}
		candidates++
		if len(decoded) > budget {
			decoded = decoded[:budget]
		}
		budget -= len(decoded)
		if !printable(decoded) {
			return
		}
		inner := &scan{kind: sc.kind}
		iv := buildView(string(decoded), inner)
		inner.view = iv
		d.scanView(iv, inner, false)
		// Only an instruction counts: invisible characters and terminal
		// sequences in decoded bytes (Cloudflare's XOR-coded e-mail
		// addresses decode to an ESC now and then) say nothing to a model.
		if len(inner.redact) == 0 {
			// Sentences hidden in base64 are hidden from the reader, not
			// from a model that decodes them: prose in a carrier is
			// suspicious whatever it says.
			if rule != "encoding_evasion.base64" || !encodedProse(decoded) {
				return
			}
			rule = "encoding_evasion.base64_prose"
		}
		snip := renderSnippet(string(decoded), span{0, len(decoded)})
		sc.addCarrier(rule, v.rawSpan(start, end), "decodes to: "+truncateRunes(snip, MaxSnippet-12))
	}
	for i := 0; i < len(raw) && candidates < maxCarriers && budget > 0; {
		if !isB64(raw[i]) && !isHexStart(raw, i) {
			i++
			continue
		}
		if i > 0 && isB64(raw[i-1]) {
			i++
			continue
		}
		if n, decoded := hexRun(raw, i); n > 0 {
			try("encoding_evasion.hex", i, i+n, decoded)
			i += n
			continue
		}
		j := i
		var upper, lower, digit, url, std bool
		for j < len(raw) && isB64(raw[j]) {
			c := raw[j]
			switch {
			case c >= 'A' && c <= 'Z':
				upper = true
			case c >= 'a' && c <= 'z':
				lower = true
			case c >= '0' && c <= '9':
				digit = true
			case c == '-' || c == '_':
				url = true
			default:
				std = true
			}
			j++
		}
		body := j
		pad := j
		for k := 0; k < 2 && pad < len(raw) && raw[pad] == '='; k++ {
			pad++
		}
		if pad == len(raw) || !isB64(raw[pad]) {
			j = pad
		}
		if body-i >= minBase64Len && upper && lower && digit && !(url && std) {
			enc := base64.RawStdEncoding
			if url {
				enc = base64.RawURLEncoding
			}
			src := raw[i:body]
			if len(src)%4 == 1 {
				src = src[:len(src)-1]
			}
			head := src[:min(len(src), 64)]
			if probe, err := enc.DecodeString(string(head)); err == nil && printable(probe[:min(len(probe), 48)]) {
				if limit := (budget + 2) / 3 * 4; len(src) > limit {
					src = src[:limit]
				}
				if decoded, err := enc.DecodeString(string(src)); err == nil {
					try("encoding_evasion.base64", i, j, decoded)
				}
			}
		}
		if j == i {
			j++
		}
		i = j
	}
}

func isHexStart(raw []byte, i int) bool {
	return hexVal(raw[i]) >= 0 || raw[i] == '\\'
}

// hexRun parses at least minHexPairs hex byte pairs at raw[i]: contiguous
// ("69676e"), separated by one space, colon or comma ("69 67 6e"), or
// prefixed with \x or 0x. It returns the length consumed and the bytes.
func hexRun(raw []byte, i int) (int, []byte) {
	var out []byte
	j := i
	last := i
	for j < len(raw) {
		k := j
		if k+1 < len(raw) && (raw[k] == '\\' || raw[k] == '0') && (raw[k+1] == 'x' || raw[k+1] == 'X') {
			k += 2
		}
		if k+1 >= len(raw) {
			break
		}
		hi, lo := hexVal(raw[k]), hexVal(raw[k+1])
		if hi < 0 || lo < 0 {
			break
		}
		out = append(out, byte(hi<<4|lo))
		k += 2
		last = k
		if k < len(raw) && (raw[k] == ' ' || raw[k] == ':' || raw[k] == ',') {
			k++
		}
		j = k
	}
	if len(out) < minHexPairs {
		return 0, nil
	}
	// The run must end at a word boundary, or it is part of a longer word.
	if last < len(raw) && (raw[last] >= 'a' && raw[last] <= 'z' || raw[last] >= 'A' && raw[last] <= 'Z' || raw[last] >= '0' && raw[last] <= '9') {
		return 0, nil
	}
	return last - i, out
}

// printable reports whether b is UTF-8 text of mostly printable characters.
func printable(b []byte) bool {
	// A cut may split the last character; forgive an incomplete tail.
	for k := 0; k < 3 && len(b) > 0 && !utf8.Valid(b); k++ {
		b = b[:len(b)-1]
	}
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	total, ok := 0, 0
	for _, r := range string(b) {
		total++
		if unicode.IsPrint(r) || r == '\n' || r == '\t' || r == '\r' {
			ok++
		}
	}
	return float64(ok) >= minPrintableRate*float64(total)
}

// encodedProse reports decoded bytes that read as sentences: valid UTF-8
// of at least eight words, nearly all letters, spaces and punctuation, with
// letters most of all. Images, hashes, keys and JSON do not.
func encodedProse(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	var letters, spaces, punct, other, words int
	inWord := false
	for _, r := range string(b) {
		switch {
		case unicode.IsLetter(r):
			letters++
			if !inWord {
				words++
			}
			inWord = true
			continue
		case r == ' ':
			spaces++
		case r == '.' || r == ',' || r == '\'' || r == '!' || r == '?' || r == ':' || r == ';' || r == '-' || r == '%':
			punct++
		default:
			other++
		}
		inWord = false
	}
	n := letters + spaces + punct + other
	return words >= 8 && spaces >= 7 && float64(letters+spaces+punct) >= 0.95*float64(n) && float64(letters) >= 0.7*float64(n)
}
