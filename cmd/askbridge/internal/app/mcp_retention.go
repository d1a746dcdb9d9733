package app

import (
	"context"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// kept is the bridge's retention as `askbridge mcp` last read it from
// the server (GET /v1/retention), for its tasks' ttlMs
// (mcp.Options.Retention), which /mcp reads from the service itself.
// It is read again once it is retentionFresh old, before the ask or wait
// that a task's ttlMs follows, so a reload that changes the retention
// reaches the tasks within that time.
type kept struct {
	mu sync.Mutex
	d  time.Duration
	// at is when d was read, or when the server said it serves no
	// retention (an older server); zero: not yet.
	at time.Time
}

// retentionFresh is how long a retention read from the server is taken
// as it stands.
const retentionFresh = 5 * time.Minute

// retention is the retention as last read. Before the server has said,
// it is core.MinRetention, the least any bridge keeps a closed question:
// a task's ttlMs then says less than the truth, never more.
func (k *kept) retention() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.d == 0 {
		return core.MinRetention
	}
	return k.d
}

// learn reads the retention from the server unless it was read within
// retentionFresh. A read that fails leaves what was known, and is tried
// again at the next call; a server that does not serve the retention is
// asked again only once it is stale.
func (b clientBackend) learn(ctx context.Context) {
	k := b.kept
	if k == nil {
		return
	}
	k.mu.Lock()
	stale := k.at.IsZero() || time.Since(k.at) >= retentionFresh
	k.mu.Unlock()
	if !stale {
		return
	}
	res, err := b.c.Retention(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case err == nil && res.Retention > 0:
		k.d, k.at = time.Duration(res.Retention), time.Now()
	case noRoute(err):
		k.at = time.Now()
	}
}
