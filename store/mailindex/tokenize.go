package mailindex

import (
	"unicode"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
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

// tokenizerName is the name chunks_fts is created with.
const tokenizerName = "steward"

// registerFTS registers FTS5 and the tokenizer on a connection.
func registerFTS(c *sqlite3.Conn) error {
	return fts5.RegisterCustom(c, func(api *fts5.API) error {
		return api.CreateTokenizer(tokenizerName, func(arg []string) (fts5.Tokenizer, error) {
			return chunkTokenizer{}, nil
		})
	})
}

type chunkTokenizer struct{}

func (chunkTokenizer) Tokenize(flags fts5.TokenizeFlag, text, locale string, token fts5.TokenCallback) error {
	query := flags&fts5.TOKENIZE_QUERY != 0
	return tokenize(text, query, func(tok string, start, end int, colocated bool) error {
		var f fts5.TokenFlag
		if colocated {
			f = fts5.TOKEN_COLOCATED
		}
		return token(f, tok, start, end)
	})
}

// isCJK tells the characters indexed in pairs: Han, Hiragana, Katakana
// (with the prolonged sound mark) and Hangul.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
		unicode.Is(unicode.Hangul, r) || r == 0x30FC || r == 0xFF70
}

// tokenize calls emit for each token of text with its byte range. For a
// document, a run of CJK characters gives each pair and, colocated with
// it, the pair's first character (the run's last character alone); for a
// query, only the pairs (a lone character alone), so that a query of
// several characters is a phrase of pairs.
func tokenize(text string, query bool, emit func(tok string, start, end int, colocated bool) error) error {
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isTokenRune(r) {
			i += size
			continue
		}
		if isCJK(r) {
			// The run of CJK characters from i.
			prev, prevEnd := -1, -1
			j := i
			for j < len(text) {
				r, size := utf8.DecodeRuneInString(text[j:])
				if !isTokenRune(r) || !isCJK(r) {
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
			if !isTokenRune(r) || isCJK(r) {
				break
			}
			j += size
		}
		if err := emit(foldWord(text[i:j]), i, j, false); err != nil {
			return err
		}
		i = j
	}
	return nil
}
