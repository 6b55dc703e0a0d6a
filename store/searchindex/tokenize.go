package searchindex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
	"golang.org/x/text/unicode/norm"
)

// The FTS5 tokenizer of the chunks ("steward"). Outside Chinese, Japanese
// and Korean text it splits like unicode61 with remove_diacritics 2:
// words are runs of letters, numbers and private-use characters, folded
// to lower case without combining marks. Those scripts write words
// without spaces, so a run of their characters is indexed as overlapping
// pairs of characters, each with the single character at the same
// position (the way Lucene's CJK analyzer does): a query of two or more
// characters matches as a phrase of pairs, a query of one character by
// the single characters. Without this, unicode61 makes a whole Japanese
// sentence one token, and no word inside it can be found.

// TokenizerName is the name FTS5 tables are created with
// (tokenize='steward').
const TokenizerName = "steward"

// RegisterFTS registers FTS5 and the tokenizer on a connection; pass it to
// driver.Open.
func RegisterFTS(c *sqlite3.Conn) error {
	return fts5.RegisterCustom(c, func(api *fts5.API) error {
		return api.CreateTokenizer(TokenizerName, func(arg []string) (fts5.Tokenizer, error) {
			return chunkTokenizer{}, nil
		})
	})
}

type chunkTokenizer struct{}

func (chunkTokenizer) Tokenize(flags fts5.TokenizeFlag, text, locale string, token fts5.TokenCallback) error {
	query := flags&fts5.TOKENIZE_QUERY != 0
	return Tokenize(text, query, func(tok string, start, end int, colocated bool) error {
		var f fts5.TokenFlag
		if colocated {
			f = fts5.TOKEN_COLOCATED
		}
		return token(f, tok, start, end)
	})
}

// IsCJK tells the characters indexed in pairs: Han, Hiragana, Katakana
// (with the prolonged sound mark) and Hangul.
func IsCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
		unicode.Is(unicode.Hangul, r) || r == 0x30FC || r == 0xFF70
}

// Tokenize calls emit for each token of text with its byte range. For a
// document, a run of CJK characters gives each pair and, colocated with
// it, the pair's first character (the run's last character alone); for a
// query, only the pairs (a lone character alone), so that a query of
// several characters is a phrase of pairs.
func Tokenize(text string, query bool, emit func(tok string, start, end int, colocated bool) error) error {
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !IsTokenRune(r) {
			i += size
			continue
		}
		if IsCJK(r) {
			// The run of CJK characters from i.
			prev, prevEnd := -1, -1
			j := i
			for j < len(text) {
				r, size := utf8.DecodeRuneInString(text[j:])
				if !IsTokenRune(r) || !IsCJK(r) {
					break
				}
				if prev >= 0 {
					if !query {
						if err := emit(text[prev:prevEnd], prev, prevEnd, false); err != nil {
							return err
						}
						if err := emit(text[prev:j+size], prev, j+size, true); err != nil {
							return err
						}
					} else if err := emit(text[prev:j+size], prev, j+size, false); err != nil {
						return err
					}
				}
				prev, prevEnd = j, j+size
				j += size
			}
			// The last character alone: in a document always (it starts
			// no pair), in a query only when the run is one character.
			if !query || prev == i {
				if err := emit(text[prev:prevEnd], prev, prevEnd, false); err != nil {
					return err
				}
			}
			i = j
			continue
		}
		j := i + size
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !IsTokenRune(r) || IsCJK(r) {
				break
			}
			j += size
		}
		if err := emit(FoldWord(text[i:j]), i, j, false); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// CJKPair tells a token that is a pair of CJK characters.
func CJKPair(t string) bool {
	r1, n := utf8.DecodeRuneInString(t)
	if n == 0 || !IsCJK(r1) {
		return false
	}
	r2, m := utf8.DecodeRuneInString(t[n:])
	return m > 0 && n+m == len(t) && IsCJK(r2)
}

// FoldWord folds a word the way the FTS5 tokenizer unicode61 with
// remove_diacritics 2 does: lower case, without combining marks.
func FoldWord(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(w)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// IsTokenRune tells the characters unicode61 keeps in words: letters,
// numbers and private-use characters.
func IsTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// QueryWords returns the distinct tokens of a query as the tokenizer
// makes them (folded words; CJK characters in pairs), at most 64.
func QueryWords(text string) []string {
	var out []string
	seen := map[string]bool{}
	_ = Tokenize(text, true, func(w string, _, _ int, _ bool) error {
		if w != "" && !seen[w] && len(out) < 64 {
			seen[w] = true
			out = append(out, w)
		}
		return nil
	})
	return out
}

// MatchQuery turns free text into an FTS5 query: every word quoted (so no
// operator in the text is obeyed) and joined by OR, ranked by bm25. It is
// empty when the text holds no word.
func MatchQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	seen := map[string]bool{}
	var q []string
	for _, w := range words {
		w = strings.ToLower(w)
		if seen[w] || len(q) >= 64 {
			continue
		}
		seen[w] = true
		q = append(q, `"`+w+`"`)
	}
	return strings.Join(q, " OR ")
}

// QuoteWords quotes each word for FTS5 and joins them with op (" AND ",
// " OR ").
func QuoteWords(words []string, op string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return strings.Join(q, op)
}
