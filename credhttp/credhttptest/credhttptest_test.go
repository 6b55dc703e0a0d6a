package credhttptest

import (
	"net/http"
	"testing"
)

// The helper must see a leak when a client does follow the redirect, or the
// services' tests would prove nothing.
func TestRedirectorSeesWhatAPlainClientLeaks(t *testing.T) {
	for _, status := range Statuses() {
		r := NewRedirector(t, status)
		req, _ := http.NewRequest(http.MethodGet, r.URL+"/search?q=x", nil)
		req.Header.Set("X-Subscription-Token", "tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		leaks := r.Leaks()
		if r.Requests() != 1 || len(leaks) != 1 || leaks[0].Header.Get("X-Subscription-Token") != "tok" || leaks[0].Path != "/search?q=x" {
			t.Errorf("status %d: requests %d, leaks %+v; want the plain client's request with its token seen on the second server", status, r.Requests(), leaks)
		}
	}
}
