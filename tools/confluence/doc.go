// Package confluence is search_confluence: the model searches the
// organization's Confluence wiki with a phrase and, optionally, a space key.
//
// The tool builds the CQL itself (the model never supplies a URL or CQL;
// both values are always quoted and escaped) and reads the wiki in one of
// two modes:
//
//   - SEARCH_PAGE loads the Data Center search page dosearchsite.action
//     through the page retrieval service (web.Service), exactly as
//     read_web_page reads a page: every request and redirect must stay
//     inside the configured base URL and is refused before it is
//     followed, the operating-system sign-in goes only to the wiki's own
//     host and only when all its addresses are private, a redirect to the
//     login page is reported as a missing sign-in, and the page comes back
//     as Markdown with links, truncated and then filtered.
//   - REST asks /rest/api/search of Confluence Cloud (e-mail and API
//     token, classic on the site or scoped on api.atlassian.com) or Data
//     Center (personal access token), follows the server's own next links
//     (Cloud's cursors; never a self-built offset), and returns the hits as
//     a list (title, space, excerpt with the matches emphasized, last
//     modified, the page's web address), with the rendered text of the best
//     hits within the character budget. Its requests carry the token, so
//     they go through credhttp.
//
// Wiki content is for HIGH-confidence providers only: the tool offers
// itself to nobody else and checks again before every search, because an
// organization may lower the tool's minimum; a result that brought content
// raises the chat's requirement to HIGH. Everything the wiki wrote is
// filtered for prompt injections after it was cut to the budget.
//
// The package must not log or return the query, a token, or fetched
// content, must not build an address from anything but the configured
// base, and must not open a connection except through the web service (the
// search page) or the configured REST API.
package confluence
