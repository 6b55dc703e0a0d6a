// Package extract reads the text of the files users keep: plain text,
// Markdown, source code and configuration files, HTML (through package
// web's extraction), PDF, Word (DOCX), OpenDocument text, spreadsheet and
// presentation (ODT, ODS, ODP), PowerPoint (PPTX), Excel (XLSX, XLSM) and
// CSV/TSV tables.
//
// A file's text comes back in sections (the pages of a PDF, the slides of a
// presentation, the sheets of a workbook), with its title where the file
// names one, and the kind of document it is, which decides how it is cut
// into chunks. Every size is bounded: the file, each member of a ZIP-based
// format when unpacked (against ZIP bombs), and the text kept. A file that
// cannot be read gives an *Error saying why, and whether reading it again
// unchanged would fail the same way.
//
// The package reads the bytes it is handed and nothing else: it opens no
// network connection, follows no link inside a document, runs no macro and
// logs nothing of the content.
package extract
