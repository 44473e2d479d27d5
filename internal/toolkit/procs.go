package toolkit

import (
	"log/slog"
	"runtime"

	"go.uber.org/fx"
)

// EnvProcs is Go's own setting for how many threads run Go code at once.
// The gateway and every tool service honour it when set; unset, they run
// on one.
const EnvProcs = "GOMAXPROCS"

// Why one: every call hands its work between goroutines (the connection's,
// the transport's read and write loops to the next hop, the audit flush).
// With a second P idle, each hand-off wakes another thread through the
// kernel, and the wake-ups cost more than the gateway's own work: on the
// bench's 2-core machine one P cut what the gateway adds over a bare proxy
// from about +80 to +15 µs per read, and its CPU per call below the
// proxy's, while 16 clients still got 85 % of the proxy's throughput
// (docs/performance.md). A home lab's assistants send a few calls at once;
// one P serves thousands a second. Compose gives each container at most
// one CPU (cpus: 0.5 or 1.0), for which Go's own default would still be
// two Ps (it rounds a limit below 2 up to 2), so a second P buys
// wake-ups, not CPU. An operator with other needs sets GOMAXPROCS.

// Procs returns the number of Ps a serving process sets: 1 when
// GOMAXPROCS is unset or empty, else 0 (the runtime has applied the
// operator's value already; an invalid one it ignores, as Go documents).
func Procs(lookup func(string) (string, bool)) int {
	if v, ok := lookup(EnvProcs); ok && v != "" {
		return 0
	}
	return 1
}

// ApplyProcs applies Procs and logs the number of Ps the process runs on.
func ApplyProcs(lookup func(string) (string, bool), log *slog.Logger) {
	if n := Procs(lookup); n > 0 {
		runtime.GOMAXPROCS(n)
	}
	log.Info("scheduler", "procs", runtime.GOMAXPROCS(0), "cpus", runtime.NumCPU(), "override", EnvProcs)
}

// ProcsModule applies Procs before the process serves (ApplyProcs).
func ProcsModule(lookup func(string) (string, bool)) fx.Option {
	return fx.Module("procs", fx.Invoke(func(log *slog.Logger) { ApplyProcs(lookup, log) }))
}
