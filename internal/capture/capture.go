// Package capture collects logs and process output in tests so they can be
// scanned afterwards, e.g. for leaked secrets.
package capture

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer that keeps everything written to it. It is safe
// for concurrent use, since loggers, servers and exec'd processes write
// from their own goroutines while the test reads. The zero value is ready
// to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written since creation or the last Reset.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Bytes returns a copy of everything written since creation or the last
// Reset; later writes do not change it.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// Reset discards everything written so far.
func (b *Buffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}
