package policy

import (
	"testing"

	"github.com/toolgate/toolgate/services/gateway/policy/opatest"
)

// BenchmarkSidecarDecide asks a real sidecar (compose's command line) for
// a read decision, one caller at a time and from 16 at once.
func BenchmarkSidecarDecide(b *testing.B) {
	sidecar := opatest.Start(b, policiesDir(b))
	r := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{})
	in := read()
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Decide(b.Context(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel16", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := r.Decide(b.Context(), in); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
