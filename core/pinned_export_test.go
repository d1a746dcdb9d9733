package core

// PinnedSpent is the cost p's rules have spent of its budget.
func PinnedSpent(p *Pinned) uint64 { return p.budget.spent }

// SpendPinned spends c more of p's budget, as rules costing that much
// would have.
func SpendPinned(p *Pinned, c uint64) { p.budget.spent += c }
