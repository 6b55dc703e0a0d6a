// Package extracteval scores extracted article text against ground truth
// the way the article-extraction-benchmark of Scrapinghub/Zyte does
// (evaluate.py at commit 4a3bc97): texts are split into \w+ tokens, joined
// into overlapping 4-token shingles, and each page's shingle counts give
// true positives, false positives and false negatives normalised by their
// sum; precision and recall are averaged over pages, and F1 is the
// harmonic mean of the two averages. MarkdownWords reduces Steward's
// Markdown to the words a reader sees (images, link targets and Markdown
// syntax are dropped) before it is scored.
//
// It is test and benchmark support: it must not be imported by product
// code.
package extracteval
