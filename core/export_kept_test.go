package core

// KeepClaim records claim, of q, as not given back (remindScan.keep), as
// a re-notice that met a store away for its store and its release does.
func (s *Service) KeepClaim(q QuestionID, claim, owner string) { s.reminders.keep(q, claim, owner) }

// KeptClaims is how many claims are kept (remindScan.kept).
func (s *Service) KeptClaims() int {
	s.reminders.mu.Lock()
	defer s.reminders.mu.Unlock()
	return len(s.reminders.kept)
}

// MaxKept is remindScan.kept's bound.
const MaxKept = maxKept
