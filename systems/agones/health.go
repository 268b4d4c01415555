package agones

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// DefaultHealthPeriod is Agones' default health periodSeconds.
const DefaultHealthPeriod = 5 * time.Second

// KeepHealthy pings the sidecar's health check every half period (the
// fleet's spec.health.periodSeconds; DefaultHealthPeriod when zero) until
// ctx ends, the first at once. Agones marks a server Unhealthy after
// failureThreshold periods without a ping, so a ping at half the period
// survives one lost. A failed ping is counted and logged, never fatal;
// each ping gives up at the next one's time. It errors at once on a
// period under a second.
func (s *SDK) KeepHealthy(ctx context.Context, period time.Duration) error {
	if period == 0 {
		period = DefaultHealthPeriod
	}
	if period < time.Second {
		return fmt.Errorf("agones: health period %v is under a second", period)
	}
	every := period / 2
	go func() {
		for {
			s.ping(ctx, every)
			select {
			case <-ctx.Done():
				return
			case <-s.clock.After(every):
			}
		}
	}()
	return nil
}

// ping sends one health ping, a JSON {} (an empty body is refused).
func (s *SDK) ping(ctx context.Context, within time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	s.pings.Add(1)
	if err := s.once(ctx, http.MethodPost, "/health", []byte("{}"), nil); err != nil && ctx.Err() == nil {
		s.pingErrors.Add(1)
		s.log.Warn("agones: health ping failed", "err", err)
	}
}
