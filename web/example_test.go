package web_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/web"
)

// A page the user typed is read with UserChosen; an address from a model is
// read with PublicOnly (web_search) or AllowList (read_web_page), which
// refuse this loopback server before connecting.
func ExampleService_Retrieve() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello\r\nworld\r\n")
	}))
	defer srv.Close()
	s := web.NewService(web.ServiceOptions{})

	page, err := s.Retrieve(context.Background(), srv.URL+"/notes.txt", web.Options{Policy: web.UserChosen})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %q\n", page.ContentKind, page.Markdown)

	_, err = s.Retrieve(context.Background(), srv.URL+"/notes.txt", web.Options{
		Policy:               web.AllowList,
		IsPrivateHostAllowed: func(string) bool { return true },
		ProviderConfidence:   policy.High,
	})
	fmt.Println(web.IsBlocked(err), errors.Is(err, web.ErrNeverAllowedAddress))

	text, cut := web.Truncate("First paragraph.\n\nSecond paragraph that does not fit.", 45)
	fmt.Printf("%v %q\n", cut, text)
	// Output:
	// TEXT_DOCUMENT "hello\nworld"
	// true true
	// true "First paragraph.\n\n[Page content truncated]"
}
