package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit"
)

func TestHealthcheckProbesOPA(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		want   int
	}{
		{"healthy", http.StatusOK, 0},
		{"not ready", http.StatusInternalServerError, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/health" {
					t.Errorf("probed %s, want /health", r.URL.Path)
				}
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			if got := toolkit.Probe(t.Context(), srv.URL+"/health"); got != tc.want {
				t.Fatalf("exit code %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("nothing listening", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL + "/health"
		srv.Close()
		if got := toolkit.Probe(t.Context(), url); got != 1 {
			t.Fatalf("exit code %d, want 1", got)
		}
	})
}
