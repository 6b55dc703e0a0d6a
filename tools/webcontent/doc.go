// Package webcontent prepares a retrieved web page for the model: it
// truncates the content first and then filters every field that reaches the
// model (content, title, description, authors, language, dates) for prompt
// injections in one batch, with the page's final address as the one source.
//
// web_search, read_web_page, `steward read` and pages the user attaches all
// go through Prepare, so what a user checks with `steward read` is what a
// model gets. It opens no connection itself.
package webcontent
