package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// SSEEvent is one server-sent event.
type SSEEvent struct {
	// Event is the "event:" field, empty when absent.
	Event string
	// Data is the "data:" lines joined by newlines.
	Data []byte
}

// SSEReader reads server-sent events. It tolerates CRLF, comments (": ping"),
// missing blank lines before EOF and very long lines. Some hosts (Groq,
// Anthropic) put trailing spaces after the JSON; those stay in Data and JSON
// decoding ignores them.
type SSEReader struct {
	r     *bufio.Reader
	event string
	data  bytes.Buffer
	has   bool
}

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, 4096)}
}

// MaxSSELine caps one line, so a host which never sends a newline cannot
// make Steward buffer without end.
const MaxSSELine = 16 << 20

// ErrSSELineTooLong is returned when one line exceeds MaxSSELine.
var ErrSSELineTooLong = errors.New("server-sent event line longer than 16 MiB")

// Next returns the next event. It returns io.EOF after the last event; a
// final event without its blank line is still returned first.
func (s *SSEReader) Next() (SSEEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.has {
				return s.flush(), nil
			}
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if s.has {
				return s.flush(), nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			s.event = string(value)
			s.has = true
		case "data":
			if s.data.Len() > 0 {
				s.data.WriteByte('\n')
			}
			s.data.Write(value)
			s.has = true
		}
	}
}

func (s *SSEReader) flush() SSEEvent {
	ev := SSEEvent{Event: s.event, Data: bytes.Clone(s.data.Bytes())}
	s.event = ""
	s.data.Reset()
	s.has = false
	return ev
}

func (s *SSEReader) readLine() ([]byte, error) {
	var long []byte
	for {
		chunk, isPrefix, err := s.r.ReadLine()
		if err != nil {
			if err == io.EOF && long != nil {
				return long, nil
			}
			return nil, err
		}
		if !isPrefix && long == nil {
			return chunk, nil
		}
		long = append(long, chunk...)
		if len(long) > MaxSSELine {
			return nil, ErrSSELineTooLong
		}
		if !isPrefix {
			return long, nil
		}
	}
}
