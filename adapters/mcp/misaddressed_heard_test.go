package mcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// refusedThenGone is a backend whose first ask the bridge refuses (it
// answered: its address is right) and whose later asks fail with gone.
type refusedThenGone struct {
	ServiceBackend
	gone error
	n    atomic.Int32
}

func (b *refusedThenGone) Ask(ctx context.Context, in core.AskInput) (*core.Question, error) {
	q, _, err := b.AskOrRepeat(ctx, in)
	return q, err
}

func (b *refusedThenGone) AskOrRepeat(context.Context, core.AskInput) (*core.Question, bool, error) {
	if b.n.Add(1) == 1 {
		return nil, false, core.Errorf(core.CodeInvalid, "askbridge server", "question is required")
	}
	return nil, false, b.gone
}

// TestARefusalShowsTheAddressIsRight: a bridge that refused a call has
// answered at its address, so a host DNS stops knowing after that (a
// compose service's name while its container restarts) is an outage, as
// the API client itself takes it, not an address to fix. Before, only a
// call that succeeded counted as an answer: after a refusal the next
// failed ask told the model that the address was wrong and that trying
// again would not mend it.
func TestARefusalShowsTheAddressIsRight(t *testing.T) {
	keyed := question
	keyed.ToolCallID = "call-9"
	h := newHandler(&refusedThenGone{gone: wrongAddresses(t)["a host DNS does not know"]})
	if _, _, err := h.call(t.Context(), nil, keyed); err == nil || !strings.Contains(err.Error(), "question is required") {
		t.Fatalf("the first ask: %v; want the bridge's refusal", err)
	}
	_, _, err := h.call(t.Context(), nil, keyed)
	if err == nil || strings.Contains(err.Error(), "will not mend") || strings.Contains(err.Error(), "address of the askbridge server is wrong") {
		t.Fatalf("an ask after the bridge answered: %v; want an outage, not a wrong address", err)
	}
}
