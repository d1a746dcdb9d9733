package loops

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/core"
)

// handBackWithin bounds a stopping drain's hand-back of what it holds
// (and its Leave after it), all of it together: a store that does not
// answer held each hand-back for core.Settle's five seconds, one after
// another in a room, so that stopping with thirty deliveries claimed
// on a hung Redis took two and a half minutes, past any orchestrator's
// grace period. What is not handed back in time stays claimed, which is
// safe: another replica takes it over once it has idled MinIdle.
const handBackWithin = 5 * time.Second

// handBackNow is the wait a delivery's gate names when the drain stops
// while its claim check or its budgets ask the store (claimGate, spend,
// dueLater), or by the time they answered (a store that never reads
// its context answers as ever): any wait, so that nothing is sent with
// the ended context and the delivery goes back due at once, as a send
// the stop cut short does. The call's error is the stop's, not a store
// that cannot say (on which the send goes ahead): read so, the post went
// out with the ended context, failed of unknown outcome, and the next
// drain's card was flagged as a possible repeat of a post that never
// left.
const handBackNow = time.Millisecond

// stopping is a drain's one deadline for its hand-backs once it stops,
// set when the first hand-back after the stop asks for it, and the
// count of those it cut short, reported once when the drain has
// stopped (report).
type stopping struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	missed atomic.Int32
}

// settle is the context for a store call that must outlive ctx (a
// hand-back): core.Settle's while ctx lives, and once it has ended the
// stop's one deadline, which every hand-back of the stop shares.
func (st *stopping) settle(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return core.Settle(ctx)
	}
	st.once.Do(func() {
		st.ctx, st.cancel = context.WithTimeout(context.WithoutCancel(ctx), handBackWithin)
	})
	return st.ctx, func() {}
}

// handedBack reports whether every hand-back of the stop went through;
// if not, it reports how many did not to o.OnError, once.
func (st *stopping) handedBack(surface core.Surface, o DeliverOptions) bool {
	n := st.missed.Load()
	if n > 0 {
		o.OnError(core.Delivery{Surface: surface}, core.Internal("hand back", fmt.Errorf(
			"%d claimed deliveries were not handed back within %s of the stop (the store did not answer): they stay claimed until another replica takes them over, after %s", n, handBackWithin, o.MinIdle)))
	}
	return n == 0
}

// release ends the stop's deadline, once the drain has done with it.
func (st *stopping) release() {
	if st.cancel != nil {
		st.cancel()
	}
}
