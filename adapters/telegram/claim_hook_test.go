package telegram

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/core"
)

// ClaimOnce is heldStore's hold on the dedupe of an update, now that an
// update is claimed while it is handled (core.Service.Sight) rather than
// marked by Once: callback_budget_test's "dedupe" stall, which names the
// dedupe "once", holds this call.
func (s *heldStore) ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (core.OnceState, error) {
	if err := s.hold(ctx, "once", key); err != nil {
		return 0, err
	}
	return s.Store.ClaimOnce(ctx, key, holder, hold)
}
