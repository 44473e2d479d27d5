package fakeradarr

import (
	"bytes"
	"io"
	"net/http"
)

func readAll(r *http.Request) ([]byte, error) { return io.ReadAll(io.LimitReader(r.Body, 1<<20)) }

func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
