package confluencetest

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Expr is a parsed CQL expression: a *Clause, *And, *Or or *Not.
type Expr interface{ String() string }

// Clause is one "field operator value" condition. Op is "=", "!=", "~",
// "!~", ">", ">=", "<", "<=", "in" or "not in"; Values holds one value,
// or the list of an IN. Quoted values are unescaped; Quoted says which
// were quoted.
type Clause struct {
	Field  string
	Op     string
	Values []string
	Quoted []bool
}

// And, Or and Not combine expressions.
type (
	And struct{ Left, Right Expr }
	Or  struct{ Left, Right Expr }
	Not struct{ X Expr }
)

func (c *Clause) String() string {
	vs := make([]string, len(c.Values))
	for i, v := range c.Values {
		vs[i] = fmt.Sprintf("%q", v)
	}
	if c.Op == "in" || c.Op == "not in" {
		return fmt.Sprintf("%s %s (%s)", c.Field, c.Op, strings.Join(vs, ", "))
	}
	return fmt.Sprintf("%s %s %s", c.Field, c.Op, strings.Join(vs, ", "))
}
func (a *And) String() string { return "(" + a.Left.String() + " AND " + a.Right.String() + ")" }
func (o *Or) String() string  { return "(" + o.Left.String() + " OR " + o.Right.String() + ")" }
func (n *Not) String() string { return "NOT " + n.X.String() }

// Conjuncts flattens the AND at the top of e into its parts, in order.
func Conjuncts(e Expr) []Expr {
	if a, ok := e.(*And); ok {
		return append(Conjuncts(a.Left), Conjuncts(a.Right)...)
	}
	return []Expr{e}
}

// ParseCQL parses the subset of the Confluence Query Language a search
// sends: clauses joined by AND, OR and NOT, parentheses, IN lists, and
// values as words or string literals in double or single quotes, in which
// a backslash takes the next character literally. Keywords are
// case-insensitive. ORDER BY is refused, because no search of Steward's
// sends it.
func ParseCQL(s string) (Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q after the query", p.toks[p.pos].text)
	}
	return e, nil
}

type tokKind int

const (
	tWord tokKind = iota
	tString
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tokKind
	text string // unescaped for strings
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case r == '(':
			out = append(out, token{tLParen, "("})
			i++
		case r == ')':
			out = append(out, token{tRParen, ")"})
			i++
		case r == ',':
			out = append(out, token{tComma, ","})
			i++
		case r == '"' || r == '\'':
			quote := byte(r)
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				c := s[j]
				if c == '\\' {
					if j+1 >= len(s) {
						return nil, errors.New("a string ends in a lone backslash")
					}
					_, n := utf8.DecodeRuneInString(s[j+1:])
					b.WriteString(s[j+1 : j+1+n])
					j += 1 + n
					continue
				}
				if c == quote {
					closed = true
					j++
					break
				}
				b.WriteByte(c)
				j++
			}
			if !closed {
				return nil, errors.New("a string is not closed")
			}
			out = append(out, token{tString, b.String()})
			i = j
		case strings.ContainsRune("=!~<>", r):
			op := string(r)
			if i+1 < len(s) && (s[i+1] == '=' || s[i+1] == '~') && r != '=' && r != '~' {
				op += string(s[i+1])
			}
			switch op {
			case "=", "!=", "~", "!~", ">", ">=", "<", "<=":
			default:
				return nil, fmt.Errorf("unknown operator %q", op)
			}
			out = append(out, token{tOp, op})
			i += len(op)
		case isWordRune(r):
			j := i
			for j < len(s) {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(r2) {
					break
				}
				j += n
			}
			out = append(out, token{tWord, s[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %q", r)
		}
	}
	return out, nil
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-' || r == '*' || r == '?'
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peekKeyword(kw string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == tWord && strings.EqualFold(p.toks[p.pos].text, kw)
}

func (p *parser) or() (Expr, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peekKeyword("or") {
		p.pos++
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		left = &Or{left, right}
	}
	return left, nil
}

func (p *parser) and() (Expr, error) {
	left, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.peekKeyword("and") {
		p.pos++
		right, err := p.not()
		if err != nil {
			return nil, err
		}
		left = &And{left, right}
	}
	return left, nil
}

func (p *parser) not() (Expr, error) {
	if p.peekKeyword("not") {
		p.pos++
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &Not{x}, nil
	}
	return p.primary()
}

var reserved = map[string]bool{"and": true, "or": true, "not": true, "in": true, "order": true, "by": true}

func (p *parser) primary() (Expr, error) {
	if p.pos >= len(p.toks) {
		return nil, errors.New("the query ends where a condition was expected")
	}
	t := p.toks[p.pos]
	if t.kind == tLParen {
		p.pos++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != tRParen {
			return nil, errors.New("a parenthesis is not closed")
		}
		p.pos++
		return e, nil
	}
	if t.kind != tWord || reserved[strings.ToLower(t.text)] {
		return nil, fmt.Errorf("expected a field name, found %q", t.text)
	}
	p.pos++
	c := &Clause{Field: t.text}
	if p.peekKeyword("not") || p.peekKeyword("in") {
		c.Op = "in"
		if p.peekKeyword("not") {
			c.Op = "not in"
			p.pos++
			if !p.peekKeyword("in") {
				return nil, errors.New("NOT after a field must be followed by IN")
			}
		}
		p.pos++
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != tLParen {
			return nil, errors.New("IN must be followed by a list in parentheses")
		}
		p.pos++
		for {
			v, quoted, err := p.value()
			if err != nil {
				return nil, err
			}
			c.Values, c.Quoted = append(c.Values, v), append(c.Quoted, quoted)
			if p.pos < len(p.toks) && p.toks[p.pos].kind == tComma {
				p.pos++
				continue
			}
			break
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != tRParen {
			return nil, errors.New("an IN list is not closed")
		}
		p.pos++
		return c, nil
	}
	if p.pos >= len(p.toks) || p.toks[p.pos].kind != tOp {
		return nil, fmt.Errorf("expected an operator after the field %q", c.Field)
	}
	c.Op = p.toks[p.pos].text
	p.pos++
	v, quoted, err := p.value()
	if err != nil {
		return nil, err
	}
	c.Values, c.Quoted = []string{v}, []bool{quoted}
	return c, nil
}

func (p *parser) value() (string, bool, error) {
	if p.pos >= len(p.toks) {
		return "", false, errors.New("the query ends where a value was expected")
	}
	t := p.toks[p.pos]
	switch {
	case t.kind == tString:
		p.pos++
		return t.text, true, nil
	case t.kind == tWord && !reserved[strings.ToLower(t.text)]:
		p.pos++
		return t.text, false, nil
	}
	return "", false, fmt.Errorf("expected a value, found %q", t.text)
}
