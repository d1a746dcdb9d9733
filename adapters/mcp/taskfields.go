package mcp

import (
	"context"

	"github.com/askbridge/askbridge/core"
)

// What a task says besides its status (taskOf): whether its form still
// asks, and how long it can be read.

// declined reports whether the host declined form key of question id
// (HostDeclines); a read that fails counts as not declined, so the form
// is asked again rather than lost.
func (h *handler) declined(ctx context.Context, id core.QuestionID, key string) bool {
	hd, ok := h.b.(HostDeclines)
	if !ok {
		return false
	}
	yes, err := hd.HostFormDeclined(ctx, id, key)
	if err != nil {
		h.opts.Logger.Warn("askbridge mcp: could not read whether the host declined a form", "question", id, "err", err)
	}
	return yes
}

// ttlOf is st's task's ttlMs: from its asking until the bridge may drop
// its question, the retention after its close, or after its deadline
// while it is open (a deadline moved later, or a close, changes it, as
// the extension allows). Nil when the retention is not known.
func (h *handler) ttlOf(st Status) *int64 {
	end := st.ClosedAt
	if end.IsZero() {
		end = st.Deadline
	}
	if h.opts.Retention == nil || end.IsZero() || st.AskedAt.IsZero() {
		return nil
	}
	ms := end.Add(h.opts.Retention()).Sub(st.AskedAt).Milliseconds()
	return &ms
}
