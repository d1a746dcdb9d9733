package slack

import (
	"context"
	"time"
)

// KnowsItself reports whether Run's auth.test has told the adapter its
// own user id: until then a reply's parent_user_id cannot tell a thread
// under someone else's message from one under ours (notOurs), and the
// thread's root is read.
func (a *Adapter) KnowsItself() bool {
	me := a.botUser.Load()
	return me != nil && *me != ""
}

// SetSleep replaces the pause before Slack is asked again (auth.test,
// Socket Mode), so a test decides when it ends. Call it before Run.
func (a *Adapter) SetSleep(sleep func(ctx context.Context, d time.Duration) bool) { a.sleep = sleep }
