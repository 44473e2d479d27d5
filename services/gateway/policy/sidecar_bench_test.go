package policy

import (
	"testing"

	"github.com/toolgate/toolgate/services/gateway/policy/opatest"
)

// BenchmarkSidecarDecide asks a real sidecar (compose's command line): a
// read (remembered), a write with arguments (its residual, once checked),
// and a decision it must be asked (a group name the memory does not key),
// one caller at a time and from 16 at once.
func BenchmarkSidecarDecide(b *testing.B) {
	sidecar := opatest.Start(b, policiesDir(b))
	r := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{})
	for _, bc := range []struct {
		name string
		in   Input
	}{
		{"read", read()},
		{"write", write("ha_climate_set_temperature")},
		{"asked", with(read(), groups("users", "odd\x00group"))},
	} {
		for range residualChecks + 2 {
			if _, err := r.Decide(b.Context(), bc.in); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(bc.name+"/sequential", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Decide(b.Context(), bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/parallel16", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8) // × 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := r.Decide(b.Context(), bc.in); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
