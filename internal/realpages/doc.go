// Package realpages holds real news and blog pages that tests and
// benchmarks read as benign web text: the 181 pages of the public
// article-extraction benchmark by Scrapinghub (MIT licence), as they were
// saved, with the benchmark's ground-truth article text for each page.
// Provenance and licence are in testdata/README.md.
//
// It is imported only by tests and benchmarks. It opens no connection and
// changes nothing; the pages are embedded in the binary that imports it.
package realpages
