package toolkit

import (
	"fmt"
	"strings"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Limits bound a service's calls beyond the per-call deadline. A service
// module states its defaults with DefaultLimits; the operator overrides
// them with <SERVICE>_MAX_CONCURRENT and <SERVICE>_MAX_RESULT_BYTES
// (FRIGATE_MAX_CONCURRENT, …). The toolkit's fx module provides the
// Limits in force, for a tool that reports them.
type Limits struct {
	// MaxConcurrent bounds the service's calls in flight; one more answers
	// busy at once instead of queueing. Zero means no bound here (the
	// gateway still bounds each service).
	MaxConcurrent int
	// MaxResultBytes refuses a result whose JSON is larger with too_large
	// and a hint to narrow the request, where a partial answer would
	// mislead (a page of events that is silently cut). Zero means none;
	// the truncation cap (TOOLGATE_MAX_RESULT_BYTES) applies either way.
	MaxResultBytes int
}

// Bounds of the <SERVICE>_MAX_* settings.
const (
	MaxConcurrentLimit  = 64
	MinResultBytesLimit = 4 << 10
	MaxResultBytesLimit = 64 << 20
)

// DefaultLimits is a service module's option: its Limits unless the
// operator sets <SERVICE>_MAX_CONCURRENT or <SERVICE>_MAX_RESULT_BYTES.
func DefaultLimits(l Limits) fx.Option { return fx.Supply(limitDefaults(l)) }

type limitDefaults Limits

type limitParams struct {
	fx.In
	Name     Name
	Defaults limitDefaults `optional:"true"`
}

// newLimits reads <SERVICE>_MAX_CONCURRENT and <SERVICE>_MAX_RESULT_BYTES
// over the module's defaults.
func newLimits(p limitParams) (Limits, error) {
	return limitsFrom(config.FromEnv(), string(p.Name), Limits(p.Defaults))
}

func limitsFrom(l *config.Loader, service string, defaults Limits) (Limits, error) {
	prefix := EnvPrefix(service)
	out := Limits{
		MaxConcurrent:  l.Int(prefix+"_MAX_CONCURRENT", defaults.MaxConcurrent, 1, MaxConcurrentLimit),
		MaxResultBytes: l.Int(prefix+"_MAX_RESULT_BYTES", defaults.MaxResultBytes, MinResultBytesLimit, MaxResultBytesLimit),
	}
	if err := l.Err(); err != nil {
		return Limits{}, fmt.Errorf("%s: configuration: %w", service, err)
	}
	return out, nil
}

// EnvPrefix is the prefix of a service's own settings: "frigate" →
// "FRIGATE", "unraid-ssh" → "UNRAID_SSH".
func EnvPrefix(service string) string {
	return strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
}

// slots is a counting bound that answers busy instead of queueing; nil
// bounds nothing.
type slots chan struct{}

func newSlots(n int) slots {
	if n <= 0 {
		return nil
	}
	return make(slots, n)
}

func (s slots) take() bool {
	if s == nil {
		return true
	}
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s slots) release() {
	if s != nil {
		<-s
	}
}

// acquire takes a slot of the service and of the tool, or explains which
// bound is full.
func (s *Service) acquire(e *entry) (release func(), err error) {
	if !s.calls.take() {
		return nil, toolerr.New(toolerr.Busy, "%d calls to %s are already running (%s_MAX_CONCURRENT); retry shortly",
			cap(s.calls), s.opts.Name, EnvPrefix(s.opts.Name))
	}
	if !e.calls.take() {
		s.calls.release()
		return nil, toolerr.New(toolerr.Busy, "%d %s calls are already running, the most it takes at once; retry shortly",
			cap(e.calls), e.tool.Name)
	}
	return func() { e.calls.release(); s.calls.release() }, nil
}

// checkSize refuses a result over Limits.MaxResultBytes.
func (s *Service) checkSize(data []byte) error {
	if limit := s.opts.Limits.MaxResultBytes; limit > 0 && len(data) > limit {
		return toolerr.New(toolerr.TooLarge, "the result is %d bytes, over %s_MAX_RESULT_BYTES (%d); narrow the request (filters, time window, page size)",
			len(data), EnvPrefix(s.opts.Name), limit)
	}
	return nil
}
