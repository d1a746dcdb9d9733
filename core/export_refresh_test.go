package core

// SetRefreshLimits sets the bounds of s's sweep of cards after a reload
// (refresh.go): a page, the open questions listed, the questions whose
// cards are edited, so that a test reaches them with a few questions.
func SetRefreshLimits(s *Service, page, scanMax, max int) {
	s.tallies.page, s.tallies.scanMax, s.tallies.max = page, scanMax, max
}
