package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseReader parses a text/event-stream body (the subset MCP uses): "data:"
// lines are joined with "\n" into one event, a blank line ends the event,
// comments (":" lines, used as keep-alives) and the id/retry fields are
// ignored, and an event cut off by the end of the stream is discarded as
// the SSE spec requires.
type sseReader struct {
	r     *bufio.Reader
	limit int
}

// errEventTooLarge reports an event whose data exceeded the limit; the event
// has been skipped and the stream can still be read.
var errEventTooLarge = errors.New("event too large")

func newSSEReader(body io.Reader, limit int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(body, 32<<10), limit: limit}
}

// next returns the data of the next "message" event. It returns
// errEventTooLarge for an oversize event and io.EOF at the end of the stream.
func (s *sseReader) next() ([]byte, error) {
	var (
		data    []byte
		hasData bool
		event   string
		tooBig  bool
	)
	for {
		line, err := readLine(s.r, s.limit)
		switch {
		case errors.Is(err, errLineTooLong):
			tooBig = true
			continue
		case err != nil:
			return nil, err
		}

		if len(line) == 0 { // end of event
			switch {
			case tooBig:
				return nil, errEventTooLarge
			case hasData && (event == "" || event == "message"):
				return data, nil
			}
			data, hasData, event = data[:0], false, ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if tooBig {
				continue
			}
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
			if len(data) > s.limit {
				tooBig, data = true, nil
			}
		case "event":
			event = string(value)
		}
	}
}
