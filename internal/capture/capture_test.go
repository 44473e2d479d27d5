package capture_test

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/capture"
)

var _ io.Writer = (*capture.Buffer)(nil)

// TestBufferConcurrent writes whole lines from many goroutines while others
// read; -race checks the locking, and every line must arrive intact.
func TestBufferConcurrent(t *testing.T) {
	var b capture.Buffer
	const writers, lines = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(&b, "writer-%d line-%d\n", w, i)
			}
		})
		wg.Go(func() {
			for range lines {
				_ = b.String()
				_ = b.Bytes()
			}
		})
	}
	wg.Wait()

	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var want []string
	for w := range writers {
		for i := range lines {
			want = append(want, fmt.Sprintf("writer-%d line-%d", w, i))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got %d lines, want %d; lines differ", len(got), len(want))
	}
}

func TestBuffer(t *testing.T) {
	tests := []struct {
		name string
		do   func(b *capture.Buffer)
		want string
	}{
		{"empty", func(*capture.Buffer) {}, ""},
		{"writes append", func(b *capture.Buffer) {
			io.WriteString(b, "a")
			io.WriteString(b, "bc")
		}, "abc"},
		{"reset discards", func(b *capture.Buffer) {
			io.WriteString(b, "old")
			b.Reset()
			io.WriteString(b, "new")
		}, "new"},
		{"as log sink", func(b *capture.Buffer) {
			slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				},
			})).Info("hello", "k", "v")
		}, "level=INFO msg=hello k=v\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b capture.Buffer
			tc.do(&b)
			if got := b.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := string(b.Bytes()); got != tc.want {
				t.Errorf("Bytes() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBytesIsACopy checks that a caller cannot alter the buffer through
// Bytes, and that later writes do not alter what Bytes returned.
func TestBytesIsACopy(t *testing.T) {
	var b capture.Buffer
	io.WriteString(&b, "secret")
	got := b.Bytes()
	got[0] = 'X'
	io.WriteString(&b, "-more")
	if s := b.String(); s != "secret-more" {
		t.Errorf("String() = %q after changing Bytes' result, want %q", s, "secret-more")
	}
	if string(got) != "Xecret" {
		t.Errorf("Bytes result = %q, changed by a later write", got)
	}
}
