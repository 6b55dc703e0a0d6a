package confluence

import (
	"net/http"

	"github.com/stewardhq/steward/credhttp"
)

// secretClient is the one place the tool builds a client for requests that
// carry its credential: credhttp refuses a redirect to another origin with
// an error naming setting, and check runs for each redirect within the
// origin before it is followed.
func secretClient(base *http.Client, setting string, check func(*http.Request, []*http.Request) error) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	c.CheckRedirect = check
	return credhttp.Client(&c, setting)
}
