package tool

// PageArgument is the name of the paging argument every paging tool takes.
const PageArgument = "page"

// PageDescription is a description for the page argument of a schema.
const PageDescription = "The page of results, starting at 1. Leave it out for the first page; ask for the next page only while has_more is true."

// Page reads the optional page argument: a positive integer, 1 when left
// out. A page beyond lastPage is refused with lastPage in the message, so
// the model learns how deep it may go. A lastPage below 1 counts as 1.
//
// Paging is stateless: every call brings its query and its page again,
// because tool results do not travel into later turns.
func (a *Args) Page(lastPage int) (int, error) {
	if lastPage < 1 {
		lastPage = 1
	}
	const whenLeftOut = "to get the first page"
	page, ok, err := a.OptionalPositiveInt(PageArgument, whenLeftOut)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 1, nil
	}
	if page > lastPage {
		s := optional(PageArgument, whenLeftOut)
		return 0, s.refuse("beyond the last page", "Argument '%s' must be at most %d, the last page there is, but was %d.", PageArgument, lastPage, page)
	}
	return page, nil
}

// PageInfo reports where a page stands, for a result to embed. It never
// carries a total: a total is often unknown, and one known for some sources
// only invites the model to page through all of them.
type PageInfo struct {
	Page    int  `json:"page"`
	HasMore bool `json:"has_more"`
}

// FetchLimit is how many items to fetch for page of size items: one more
// than the pages up to it hold, so that HasMore can be told without a
// count.
func FetchLimit(page, size int) int {
	if page < 1 {
		page = 1
	}
	if size < 1 {
		size = 1
	}
	return page*size + 1
}

// LastPage is the deepest page whose FetchLimit stays within window items.
// It is at least 1.
func LastPage(window, size int) int {
	if size < 1 {
		size = 1
	}
	last := (window - 1) / size
	if last < 1 {
		return 1
	}
	return last
}

// Slice cuts page (from 1) of size items out of items, which hold the best
// matches from the first on, e.g. FetchLimit(page, size) of them. HasMore
// is true when items go on beyond the page and the page is not the last
// one.
func Slice[T any](items []T, page, size, lastPage int) ([]T, PageInfo) {
	if page < 1 {
		page = 1
	}
	if size < 1 {
		size = 1
	}
	info := PageInfo{Page: page}
	start := (page - 1) * size
	if start >= len(items) {
		return nil, info
	}
	end := start + size
	if end > len(items) {
		end = len(items)
	}
	info.HasMore = len(items) > end && page < lastPage
	return items[start:end:end], info
}
