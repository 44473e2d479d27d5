package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"sync"
)

// errLineTooLong reports a line longer than the allowed bound. The rest of
// the line has already been discarded, so the caller can go on reading.
var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its "\n" or "\r\n" terminator. A
// line longer than limit bytes is drained and reported as errLineTooLong. A
// final line without a terminator is returned with a nil error; io.EOF comes
// only when nothing is left.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, chunk...)
			// +2 leaves room for the "\r\n" terminator.
			if len(buf) > limit+2 {
				tooLong, buf = true, nil
			}
		}
		switch {
		case err == nil:
			return finishLine(buf, tooLong, limit)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !tooLong && len(buf) == 0 {
				return nil, io.EOF
			}
			return finishLine(buf, tooLong, limit)
		default:
			return nil, err
		}
	}
}

func finishLine(buf []byte, tooLong bool, limit int) ([]byte, error) {
	if tooLong {
		return nil, errLineTooLong
	}
	line := bytes.TrimSuffix(buf, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) > limit {
		return nil, errLineTooLong
	}
	return line, nil
}

// lineWriter writes whole lines to stdout. The mutex keeps concurrent
// responses from interleaving inside a line, which would corrupt the stream
// for the client.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	log    *slog.Logger
	failed bool
}

// writeLine writes msg followed by "\n" with a single Write call. After the
// first failure (the client went away) further lines are dropped.
func (lw *lineWriter) writeLine(msg []byte) {
	line := make([]byte, 0, len(msg)+1)
	line = append(line, msg...)
	line = append(line, '\n')

	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.failed {
		return
	}
	if _, err := lw.w.Write(line); err != nil {
		lw.failed = true
		lw.log.Error("writing to stdout failed; dropping further messages", "err", err)
	}
}
