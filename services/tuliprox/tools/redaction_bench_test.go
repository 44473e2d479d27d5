package tools

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
)

// BenchmarkConfigRedaction prices get_config's own pass (parse and redact)
// against the generic redaction every result already gets, on the demo
// configuration: compare the sub-benchmarks' ns/op within one run.
func BenchmarkConfigRedaction(b *testing.B) {
	raw, err := json.Marshal(faketuliprox.NewDemoData(time.Unix(1_750_000_000, 0)).Config)
	if err != nil {
		b.Fatal(err)
	}
	generic := redact.New()
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := generic.JSON(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get_config", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			doc, ok := decodeConfig(raw)
			if !ok {
				b.Fatal("not parsed")
			}
			_ = redactConfig(doc)
		}
	})
}
