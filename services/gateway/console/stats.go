package console

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/toolgate/toolgate/services/gateway/audit"
)

// minutes is the span of the services' figures: the last hour, by minute.
const minutes = 60

// Latencies are counted in buckets growing by a quarter from 50 µs to
// about two minutes, so a quantile is known within a quarter of itself
// whatever the hour looked like, in a fixed few hundred bytes per minute.
const (
	bucketBase   = 0.05 // ms, upper bound of the first bucket
	bucketGrowth = 1.25
	buckets      = 68
)

// bucketOf is the bucket of a duration in milliseconds.
func bucketOf(ms float64) int {
	if ms <= bucketBase {
		return 0
	}
	b := int(math.Ceil(math.Log(ms/bucketBase) / math.Log(bucketGrowth)))
	return min(b, buckets-1)
}

// bucketTop is the upper bound of bucket b in milliseconds.
func bucketTop(b int) float64 { return bucketBase * math.Pow(bucketGrowth, float64(b)) }

// minute is one service's calls in one minute.
type minute struct {
	stamp    int64 // Unix minute this slot holds
	calls    int
	failed   int
	refused  int
	latency  [buckets]uint32
	measured int // calls with a latency (those the gateway ran)
}

// stats holds, per service, the last hour by minute.
type stats struct {
	services map[string]*[minutes]minute
}

func newStats() *stats { return &stats{services: map[string]*[minutes]minute{}} }

func (s *stats) add(rec audit.Record, class string) {
	service := rec.Service
	if service == "" {
		return // a tool no service offers: no service's figure
	}
	slots := s.services[service]
	if slots == nil {
		slots = new([minutes]minute)
		s.services[service] = slots
	}
	stamp := rec.Time.Unix() / 60
	m := &slots[stamp%minutes]
	if m.stamp != stamp {
		if m.stamp > stamp {
			return // older than the hour the slot holds now
		}
		*m = minute{stamp: stamp}
	}
	m.calls++
	switch class {
	case ClassFailed:
		m.failed++
	case ClassRefused:
		m.refused++
	}
	// A line without a duration (a refusal, a trail written by a clock
	// that stood still) has no latency to count.
	if class != ClassRefused && rec.DurationMS > 0 {
		m.latency[bucketOf(rec.DurationMS)]++
		m.measured++
	}
}

// ServiceFigures are one service's last hour.
type ServiceFigures struct {
	Service string
	// Per minute, oldest first, the last one the current minute.
	Calls, Failed, Refused []int
	P50, P99               []float64 // ms; 0 where the minute had no call
	// Over the hour.
	TotalCalls, TotalFailed, TotalRefused int
	HourP50, HourP99                      float64
}

func (s *stats) figures(now time.Time) []ServiceFigures {
	last := now.Unix() / 60
	var out []ServiceFigures
	for service, slots := range s.services {
		f := ServiceFigures{Service: service}
		var hour [buckets]uint32
		hourN := 0
		for i := range minutes {
			stamp := last - int64(minutes-1-i)
			m := &slots[((stamp%minutes)+minutes)%minutes]
			if m.stamp != stamp {
				f.Calls, f.Failed, f.Refused = append(f.Calls, 0), append(f.Failed, 0), append(f.Refused, 0)
				f.P50, f.P99 = append(f.P50, 0), append(f.P99, 0)
				continue
			}
			f.Calls, f.Failed, f.Refused = append(f.Calls, m.calls), append(f.Failed, m.failed), append(f.Refused, m.refused)
			f.P50, f.P99 = append(f.P50, quantile(&m.latency, m.measured, 0.5)), append(f.P99, quantile(&m.latency, m.measured, 0.99))
			f.TotalCalls += m.calls
			f.TotalFailed += m.failed
			f.TotalRefused += m.refused
			for b, n := range m.latency {
				hour[b] += n
			}
			hourN += m.measured
		}
		if f.TotalCalls == 0 {
			continue
		}
		f.HourP50, f.HourP99 = quantile(&hour, hourN, 0.5), quantile(&hour, hourN, 0.99)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b ServiceFigures) int { return cmp.Compare(a.Service, b.Service) })
	return out
}

// quantile is the upper bound of the bucket that holds quantile q of n
// counted latencies (0 for none).
func quantile(h *[buckets]uint32, n int, q float64) float64 {
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(n)))
	seen := 0
	for b, c := range h {
		seen += int(c)
		if seen >= rank {
			return bucketTop(b)
		}
	}
	return bucketTop(buckets - 1)
}
