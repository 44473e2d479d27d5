package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// DefaultFileMax is the size at which the audit file is rotated.
const DefaultFileMax = 8 << 20

// MinFileMax is the smallest size the audit file may be capped at.
const MinFileMax = 64 << 10

// File is the audit trail in the gateway's data volume, bounded: once a
// write would take it past its cap, the file becomes its one predecessor
// (path + ".1", replacing the one before) and a new file starts. So the
// trail on disk never exceeds about twice the cap, and the latest lines
// are always there for the operator console to read on start. A Logger
// writes whole lines per Write, so no line is ever split across the two.
type File struct {
	path string
	max  int64

	mu   sync.Mutex
	f    *os.File
	size int64
}

// OpenFile opens (or creates) the audit file at path, capped at max bytes.
func OpenFile(path string, max int64) (*File, error) {
	if max < MinFileMax {
		return nil, fmt.Errorf("audit file: the cap must be at least %d bytes", MinFileMax)
	}
	f := &File{path: path, max: max}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) open() error {
	file, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit file: %w", err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return fmt.Errorf("audit file: %w", err)
	}
	f.f, f.size = file, st.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past its cap
// (a file already empty takes p whatever its size).
func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return 0, errors.New("audit file: closed")
	}
	if f.size > 0 && f.size+int64(len(p)) > f.max {
		if err := f.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := f.f.Write(p)
	f.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("audit file: %w", err)
	}
	return n, nil
}

func (f *File) rotate() error {
	if err := f.f.Close(); err != nil {
		return fmt.Errorf("audit file: %w", err)
	}
	f.f = nil
	if err := os.Rename(f.path, f.path+".1"); err != nil {
		return fmt.Errorf("audit file: rotate: %w", err)
	}
	return f.open()
}

// Close closes the file.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}

// ReadFile calls fn with every whole line of the audit file at path,
// oldest first: its predecessor's, then its own. Missing files have no
// lines; a line longer than maxLine (no line the gateway writes is) and a
// last line without its newline (cut by a crash) are skipped.
func ReadFile(path string, fn func(line []byte)) error {
	for _, p := range []string{path + ".1", path} {
		if err := readLines(p, fn); err != nil {
			return err
		}
	}
	return nil
}

// maxLine bounds a line ReadFile hands on: the record's fields are capped
// at maxField bytes each, at most six bytes each once escaped.
const maxLine = 128 << 10

func readLines(path string, fn func([]byte)) error {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit file: %w", err)
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, maxLine)
	for {
		line, err := r.ReadSlice('\n')
		switch {
		case err == nil:
			fn(line[:len(line)-1])
		case errors.Is(err, bufio.ErrBufferFull):
			// Longer than any line the gateway writes: skip to its end.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("audit file: %w", err)
			}
		case errors.Is(err, io.EOF):
			return nil
		default:
			return fmt.Errorf("audit file: %w", err)
		}
	}
}

// Tee writes every batch to each writer in turn, all of them even when one
// fails, and returns the first error: the audit file keeps its lines when
// stdout is gone, and the other way round.
func Tee(ws ...io.Writer) io.Writer { return tee(ws) }

type tee []io.Writer

func (t tee) Write(p []byte) (int, error) {
	var first error
	for _, w := range t {
		if _, err := w.Write(p); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return 0, first
	}
	return len(p), nil
}
