// Package web is the one way Steward reads a web page.
//
// A Service fetches one address under a target policy chosen by whoever chose
// the address (PublicOnly for web_search, AllowList for read_web_page,
// UserChosen for an address the user typed), checks every hop of the redirect
// chain before connecting, resolves names itself and dials only the addresses
// it checked, caps the response size after decompression, refuses binary
// content on its headers, and turns an HTML page into Markdown of its main
// content (a text document comes back as sent): tables stay Markdown tables,
// links are made absolute, and a discussion thread marked up with schema.org
// microdata keeps its replies, not only the opening post. Truncate is the Markdown
// truncator the tools apply before the prompt-injection filter runs.
//
// An HTML body is decoded with the charset of the Content-Type header, else
// its byte order mark, else a meta charset or http-equiv Content-Type
// anywhere in the head, else as UTF-8 when it is valid UTF-8, else as
// Windows-1252 (DecodeHTML). The main content is readability's, pruned of
// the furniture readability keeps: picture captions and credits, lists and
// paragraphs that only link elsewhere, widget labels ("Advertisement",
// "Share"), bylines and datelines (the byline is in Authors), copyright
// and source lines, and elements whose class or id names a widget
// (share, related, newsletter, comments …), never a block holding a fifth
// of the content's text.
//
// Page metadata follows the reference's fallback chains. JSON-LD comes
// first: at most 20 application/ld+json scripts are read, a script over
// 256 KiB, nested deeper than 32 or not valid JSON is skipped, and @graph
// and top-level arrays are flattened into candidates. A candidate scores
// +100 for an article type (Article and its subtypes: NewsArticle and its
// kinds, BlogPosting, LiveBlogPosting, TechArticle, APIReference,
// ScholarlyArticle, Report, SocialMediaPosting, DiscussionForumPosting …)
// or +20 for WebPage and its subtypes (AboutPage, FAQPage, QAPage,
// CollectionPage, ProfilePage …), +50 when its url, @id or
// mainEntityOfPage is the page's address (scheme and host case-insensitive,
// no fragment or trailing slash) and -80 when it names only other
// addresses, and +10 for a headline or name; the best positive score wins,
// ties going to the first in the document. An object of any other type
// (Organization, WebSite …) is never taken for the page. Then, per field:
// og, citation_/dc., itemprop microdata, the first h1 (title only),
// twitter, and the <title> (for the description, meta description);
// readability's own reading is the last resort. Each value is cut at 1,000
// characters; authors (JSON-LD author, else the author meta tags, else the
// first item's itemprop author) are at most 10 names of at most 200
// characters, and a URL is never an author.
//
// ServiceOptions.ConnectTimeout bounds each connection attempt and TLS
// handshake (ErrConnectTimeout), HeaderTimeout the wait for the response
// headers (ErrHeaderTimeout), and Options.Timeout the whole retrieval;
// all three errors wrap ErrTimeout.
//
// A retrieval may carry the operating-system sign-in (Options.SignIn,
// Kerberos through SPNEGO; web/kerberos implements it) when a server
// challenges with Negotiate, but only on an https hop to the first
// request's host and port whose addresses are all private and allow-listed
// (or all public and explicitly allowed), for a HIGH-confidence provider. A 401 to the signed-in request is ErrSignInRefused.
//
// LocalHost decides, from a name lookup alone, whether a host stays on this
// machine or in a private network (the rule for what counts as a
// self-hosted provider). Text a server sent is quoted in an error message
// only cut short.
//
// This package must not filter content for prompt injections (that is the
// guard package), must not know any tool or provider, must never log fetched
// content or a URL's query values or userinfo, and must never put a refused
// address into an error message.
package web
