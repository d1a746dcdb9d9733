package console

// SetHistoryScan sets how many log reads one history page may make past
// a question's indexed events, and returns what restores it, so that a
// test reaches the bound without seeding tens of thousands of events.
func SetHistoryScan(n int) (restore func()) {
	was := historyScan
	historyScan = n
	return func() { historyScan = was }
}
