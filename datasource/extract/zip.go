package extract

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/stewardhq/steward/internal/capped"
)

// maxZipEntries bounds the members of a ZIP-based document looked at.
const maxZipEntries = 10000

// zipDoc is a ZIP-based document (OOXML, ODF) with bounded reading.
type zipDoc struct {
	files map[string]*zip.File
	lim   Limits
	// unpacked counts the bytes unpacked so far, against 4×MaxUnpacked in
	// all.
	unpacked int64
}

func openZip(data []byte, what string, lim Limits) (*zipDoc, error) {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, permanent("the file is damaged or not a valid "+what+" file", err)
	}
	if len(r.File) > maxZipEntries {
		return nil, permanent(fmt.Sprintf("the %s file has more than %d parts", what, maxZipEntries), nil)
	}
	return zipDocOf(r, lim), nil
}

// zipDocOf indexes an archive's members by their cleaned names.
func zipDocOf(r *zip.Reader, lim Limits) *zipDoc {
	z := &zipDoc{files: map[string]*zip.File{}, lim: lim}
	for _, f := range r.File {
		z.files[strings.TrimPrefix(path.Clean("/"+f.Name), "/")] = f
	}
	return z
}

// errTooLarge is the error of a member that unpacks to more than allowed.
type errTooLarge struct {
	name  string
	limit int64
}

func (e errTooLarge) Error() string {
	return fmt.Sprintf("%s unpacks to more than %s", e.name, size(e.limit))
}

// open returns a reader of a member that fails once it unpacked more than
// the limits allow; ok is false when the member is missing.
func (z *zipDoc) open(name string) (io.ReadCloser, bool, error) {
	f, ok := z.files[name]
	if !ok {
		return nil, false, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, true, permanent("a part of the file could not be unpacked", err)
	}
	limit := min(z.lim.MaxUnpacked, 4*z.lim.MaxUnpacked-z.unpacked)
	return &boundedReader{rc: rc, r: capped.Reader{R: rc, N: limit, Err: errTooLarge{name, z.lim.MaxUnpacked}}, z: z}, true, nil
}

// boundedReader reads a member within its limit and counts what it
// unpacked against the document's.
type boundedReader struct {
	rc io.ReadCloser
	r  capped.Reader
	z  *zipDoc
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.z.unpacked += int64(n)
	return n, err
}

func (b *boundedReader) Close() error { return b.rc.Close() }

// walk decodes a member's XML, calling start, end and text for its
// elements and character data. A member that is missing gives ok false.
func (z *zipDoc) walk(name string, start func(xml.StartElement), end func(xml.EndElement), text func([]byte)) (bool, error) {
	rc, ok, err := z.open(name)
	if err != nil || !ok {
		return ok, err
	}
	defer rc.Close()
	dec := xml.NewDecoder(rc)
	dec.Strict = false
	// Entities are not expanded beyond the XML ones, and no DTD is read.
	dec.Entity = xml.HTMLEntity
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			var tl errTooLarge
			if asTooLarge(err, &tl) {
				return true, permanent("the file is too large when unpacked ("+tl.Error()+")", nil)
			}
			return true, permanent("a part of the file is not valid XML", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if start != nil {
				start(t)
			}
		case xml.EndElement:
			if end != nil {
				end(t)
			}
		case xml.CharData:
			if text != nil {
				text(t)
			}
		}
	}
}

func asTooLarge(err error, tl *errTooLarge) bool {
	for err != nil {
		if e, ok := err.(errTooLarge); ok {
			*tl = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// attr returns the value of the attribute with the local name local.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// coreTitle reads dc:title from a properties member (docProps/core.xml,
// meta.xml).
func (z *zipDoc) coreTitle(name string) string {
	var b strings.Builder
	in := false
	_, _ = z.walk(name, func(e xml.StartElement) {
		in = e.Name.Local == "title"
	}, func(xml.EndElement) { in = false }, func(t []byte) {
		if in {
			b.Write(t)
		}
	})
	return b.String()
}
