package credhttp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/credhttp"
	"github.com/stewardhq/steward/internal/testenv"
)

const module = "github.com/stewardhq/steward"

// secretLooking matches header and field names that would carry a secret.
var secretLooking = regexp.MustCompile(`(?i)(auth|api-?_?key|token|secret|passw|cookie|credential|session|signature|bearer)`)

// secretFieldLooking matches JSON body fields that would carry a secret.
var secretFieldLooking = regexp.MustCompile(`(?i)^(api_?key|apikey|password|passwd|passphrase|secret|client_secret|[a-z]*_?token|bearer)$`)

// headerName is what a literal header name looks like; query parameters
// such as "q" or "format" are not.
var headerName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)+$|^(?i:authorization|cookie)$`)

// sentBy names, for a package that builds secret headers but does not send
// the request itself, the package that sends it.
var sentBy = map[string]string{
	"llm/chatcompletions": "llm", // through llm.Transport
	"llm/responses":       "llm",
	"llm/anthropic":       "llm",
	"app":                 "guard", // the classifier's key, sent by guard's classifier client
}

type finding struct {
	pos  token.Position
	what string
}

type pkgInfo struct {
	imports  map[string]bool
	usesHTTP bool
	secrets  []finding // secret headers or fields written
	dynamic  []finding // headers written under a name only known at run time
	unlisted []finding // secret-looking names credhttp does not list
}

// TestEverySecretGoesThroughCredhttp reads every package of the module: a
// package that writes a header or a JSON body field carrying a secret, or
// writes headers whose names come from configuration, must send its
// requests through credhttp (import it, or import the package of ours that
// sends them and does), and every secret-looking name must be one credhttp
// lists. A new secret header added without the redirect rule fails here.
func TestEverySecretGoesThroughCredhttp(t *testing.T) {
	root := testenv.RepoRoot(t)
	pkgs := map[string]*pkgInfo{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module, such as bench/
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		ip := module
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		p := pkgs[ip]
		if p == nil {
			p = &pkgInfo{imports: map[string]bool{}}
			pkgs[ip] = p
		}
		scanFile(fset, f, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("read only %d packages; the walk missed the module", len(pkgs))
	}
	covered := func(ip string) bool {
		p := pkgs[ip]
		if p.imports[module+"/credhttp"] || ip == module+"/credhttp" {
			return true
		}
		// A package that only builds the headers another one sends is
		// covered by that sender, which must import credhttp itself.
		if sender, ok := sentBy[strings.TrimPrefix(ip, module+"/")]; ok {
			q := pkgs[module+"/"+sender]
			return q != nil && p.imports[module+"/"+sender] && q.imports[module+"/credhttp"]
		}
		return false
	}
	sawSecret := 0
	for ip, p := range pkgs {
		for _, f := range p.unlisted {
			t.Errorf("%s: %s looks like it carries a secret but credhttp does not list it; add it to credhttp's secret headers or fields and send the request through credhttp.Client", f.pos, f.what)
		}
		sawSecret += len(p.secrets)
		for _, f := range p.secrets {
			t.Logf("%s: %s", f.pos, f.what)
		}
		if covered(ip) {
			continue
		}
		for _, f := range append(p.secrets, p.dynamic...) {
			t.Errorf("%s: %s is written by %s, which does not send its requests through credhttp.Client; a redirect could carry it to another origin", f.pos, f.what, ip)
		}
	}
	// The scan must see the secrets the code is known to send, or it
	// proves nothing.
	if sawSecret < 5 {
		t.Errorf("found only %d places that write a secret header; the scan is broken", sawSecret)
	}
}

func scanFile(fset *token.FileSet, f *ast.File, p *pkgInfo) {
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		p.imports[path] = true
		if path == "net/http" {
			p.usesHTTP = true
		}
	}
	checkName := func(pos token.Pos, name, kind string) {
		switch {
		case credhttp.IsSecretHeader(name):
			p.secrets = append(p.secrets, finding{fset.Position(pos), kind + " " + name})
		case secretLooking.MatchString(name):
			p.unlisted = append(p.unlisted, finding{fset.Position(pos), kind + " " + name})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Set" && sel.Sel.Name != "Add") || len(n.Args) != 2 {
				return true
			}
			if _, isCall := sel.X.(*ast.CallExpr); isCall {
				return true // w.Header().Set(…): a response header of a server
			}
			if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				name, _ := strconv.Unquote(lit.Value)
				if headerName.MatchString(name) {
					checkName(lit.Pos(), name, "header")
				}
				return true
			}
			if isHeaderField(sel.X) {
				p.dynamic = append(p.dynamic, finding{fset.Position(n.Pos()), "a header named at run time"})
			}
		case *ast.AssignStmt:
			for _, lhs := range n.Lhs {
				ix, ok := lhs.(*ast.IndexExpr)
				if !ok || !isHeaderField(ix.X) {
					continue
				}
				if lit, ok := ix.Index.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, _ := strconv.Unquote(lit.Value)
					checkName(lit.Pos(), name, "header")
				} else {
					p.dynamic = append(p.dynamic, finding{fset.Position(n.Pos()), "a header named at run time"})
				}
			}
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Header" {
				for _, e := range n.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					if lit, ok := kv.Key.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						name, _ := strconv.Unquote(lit.Value)
						checkName(lit.Pos(), name, "header")
					}
				}
			}
		case *ast.Field:
			if n.Tag == nil || !p.usesHTTP {
				return true
			}
			tag, _ := strconv.Unquote(n.Tag.Value)
			name, _, _ := strings.Cut(reflectTag(tag, "json"), ",")
			if name == "" || !secretFieldLooking.MatchString(name) {
				return true
			}
			if slices.Contains(credhttp.SecretFields(), name) {
				p.secrets = append(p.secrets, finding{fset.Position(n.Pos()), "body field " + name})
			} else {
				p.unlisted = append(p.unlisted, finding{fset.Position(n.Pos()), "body field " + name})
			}
		}
		return true
	})
}

// isHeaderField reports whether e is x.Header, the header of a request.
func isHeaderField(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Header"
}

// reflectTag reads one key of a struct tag.
func reflectTag(tag, key string) string {
	for tag != "" {
		tag = strings.TrimLeft(tag, " ")
		k, rest, ok := strings.Cut(tag, ":")
		if !ok || len(rest) == 0 || rest[0] != '"' {
			return ""
		}
		v, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return ""
		}
		tag = rest[len(v):]
		if k == key {
			s, _ := strconv.Unquote(v)
			return s
		}
	}
	return ""
}
