package registry

import (
	"slices"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
	"pgregory.net/rapid"
)

// selectionRegistry has the collection mailboxes, lone tools, the wiki
// pair and a context tool.
func selectionRegistry(t testing.TB) *Registry {
	tools := []tool.Tool{
		newFake("web_search", nil), newFake("read_web_page", nil), newFake("search_confluence", nil),
		newFake("search_mails", nil), newFake("read_mail", nil), newFake("count_mails", nil),
		newFake("semantic_search", func(d *tool.Definition) { d.Activation = tool.Context }),
	}
	return mustNew(t, Options{}, tools, []Collection{
		{ID: "mailboxes", ToolIDs: []string{"search_mails", "read_mail", "count_mails"}, MinimumConfidence: policy.VeryLow},
	})
}

func TestNormalizeSelection(t *testing.T) {
	r := selectionRegistry(t)
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"empty", nil, []string{}},
		{"a tool becomes its collection", []string{"read_mail"}, []string{"mailboxes"}},
		{"a lone tool is its own collection", []string{"web_search"}, []string{"web_search"}},
		{"several tools of one collection become one entry", []string{"count_mails", "web_search", "search_mails", "mailboxes"}, []string{"mailboxes", "web_search"}},
		{"search_confluence brings read_web_page", []string{"search_confluence"}, []string{"search_confluence", "read_web_page"}},
		{"read_web_page already selected first stays first", []string{"read_web_page", "search_confluence"}, []string{"read_web_page", "search_confluence"}},
		{"read_web_page selected later moves up behind the wiki", []string{"search_confluence", "web_search", "read_web_page"}, []string{"search_confluence", "read_web_page", "web_search"}},
		{"context tools are dropped", []string{"semantic_search", "web_search"}, []string{"web_search"}},
		{"unknown IDs are kept", []string{"plugin_tool", "web_search", "plugin_tool"}, []string{"plugin_tool", "web_search"}},
		{"duplicates go", []string{"web_search", "web_search"}, []string{"web_search"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := r.NormalizeSelection(in)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Fatal("input mutated")
			}
		})
	}
}

func TestExpandSelection(t *testing.T) {
	r := selectionRegistry(t)
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"a collection becomes its tools in listed order", []string{"mailboxes"}, []string{"search_mails", "read_mail", "count_mails"}},
		{"one tool of a collection stands for all", []string{"count_mails"}, []string{"search_mails", "read_mail", "count_mails"}},
		{"unknown IDs stay", []string{"web_search", "plugin_tool"}, []string{"web_search", "plugin_tool"}},
		{"the wiki brings the page reader", []string{"search_confluence"}, []string{"search_confluence", "read_web_page"}},
		{"context tools are not selections", []string{"semantic_search"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.ExpandSelection(tt.in); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// A declared collection holding the wiki brings read_web_page too.
func TestNormalizeWikiInsideACollection(t *testing.T) {
	r := mustNew(t, Options{}, []tool.Tool{newFake("search_confluence", nil), newFake("wiki_pages", nil), newFake("read_web_page", nil)},
		[]Collection{{ID: "wiki", ToolIDs: []string{"search_confluence", "wiki_pages"}}})
	if got := r.NormalizeSelection([]string{"wiki"}); !slices.Equal(got, []string{"wiki", "read_web_page"}) {
		t.Fatalf("got %v", got)
	}
}

// "NormalizeSelection … does not mutate its input, and is idempotent";
// ExpandSelection likewise; both keep the order: appending to a selection
// never moves what was there.
func TestSelectionProperties(t *testing.T) {
	r := selectionRegistry(t)
	ids := []string{"web_search", "read_web_page", "search_confluence", "search_mails", "read_mail", "count_mails",
		"semantic_search", "mailboxes", "plugin_a", "plugin_b"}
	rapid.Check(t, func(t *rapid.T) {
		gen := rapid.SliceOf(rapid.SampledFrom(ids))
		x := gen.Draw(t, "x")
		y := gen.Draw(t, "y")
		orig := slices.Clone(x)

		n := r.NormalizeSelection(x)
		if !slices.Equal(x, orig) {
			t.Fatalf("input mutated: %v -> %v", orig, x)
		}
		if n2 := r.NormalizeSelection(n); !slices.Equal(n2, n) {
			t.Fatalf("normalize not idempotent: %v -> %v -> %v", x, n, n2)
		}
		e := r.ExpandSelection(x)
		if e2 := r.ExpandSelection(e); !slices.Equal(e2, e) {
			t.Fatalf("expand not idempotent: %v -> %v -> %v", x, e, e2)
		}
		if ne := r.NormalizeSelection(e); !slices.Equal(ne, n) {
			t.Fatalf("normalize(expand(x)) = %v, want normalize(x) = %v", ne, n)
		}
		xy := append(slices.Clone(x), y...)
		if got := r.NormalizeSelection(xy); !slices.Equal(got[:len(n)], n) {
			t.Fatalf("appending %v reordered %v: %v", y, n, got)
		}
		if got := r.ExpandSelection(xy); !slices.Equal(got[:len(e)], e) {
			t.Fatalf("appending %v reordered %v: %v", y, e, got)
		}
		for _, id := range n {
			if id == "semantic_search" || (r.IsKnown(id) && r.CollectionID(id) != id) {
				t.Fatalf("normalized selection holds %q", id)
			}
		}
		if slices.Contains(n, "search_confluence") && !slices.Contains(n, "read_web_page") {
			t.Fatalf("search_confluence without read_web_page: %v", n)
		}
	})
}
