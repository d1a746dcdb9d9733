package teams

import (
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"
)

// The messaging endpoint is public, so anyone can have it refuse
// requests as fast as they can send them. The first refusals are logged
// as they come (a misconfigured bot shows at once), a flood of them at
// most once every refusalEvery, each line saying how many were left out
// since the one before.
const (
	refusalBurst = 10
	refusalEvery = 10 * time.Second
)

// maxRefusal bounds the reason a refusal's log line quotes.
const maxRefusal = 200

// refusalLog logs refusals at a bounded rate. zerolog's samplers drop
// lines without counting them; this one counts.
type refusalLog struct {
	log zerolog.Logger
	now func() time.Time

	mu      sync.Mutex
	limit   *rate.Limiter
	dropped int // refusals not logged since the last one logged
}

func newRefusalLog(log zerolog.Logger, now func() time.Time) *refusalLog {
	return &refusalLog{log: log, now: now, limit: rate.NewLimiter(rate.Every(refusalEvery), refusalBurst)}
}

// refused logs one refusal, or counts it if the rate is spent.
func (l *refusalLog) refused(why string) {
	l.mu.Lock()
	if !l.limit.AllowN(l.now(), 1) {
		l.dropped++
		l.mu.Unlock()
		return
	}
	dropped := l.dropped
	l.dropped = 0
	l.mu.Unlock()
	ev := l.log.Warn().Str("error", why)
	if dropped > 0 {
		ev = ev.Int("not_logged", dropped)
	}
	ev.Msg("teams: activity refused")
}

// refused answers 401 and logs why (refusalLog bounds how often),
// quoting at most maxRefusal bytes of it: a refusal's reason can quote
// the caller's token (its alg, its kid).
func (a *Adapter) refused(w http.ResponseWriter, err error) {
	why := err.Error()
	if len(why) > maxRefusal {
		why = why[:maxRefusal] + "…"
	}
	a.refusals.refused(why)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
}
