package teams

import (
	"context"
	"time"
)

// SetSleep replaces the pause before a throttled private note is sent
// again, so a test decides when it ends. Call it before the activity
// that is told the note arrives.
func (a *Adapter) SetSleep(sleep func(ctx context.Context, d time.Duration) bool) { a.sleep = sleep }
