package console

import "time"

// SetHistoryScan sets how many log reads one history page may make past
// a question's indexed events, and returns what restores it, so that a
// test reaches the bound without seeding tens of thousands of events.
func SetHistoryScan(n int) (restore func()) {
	was := historyScan
	historyScan = n
	return func() { historyScan = was }
}

// SetStreamCheck sets how often a live page proves its event stream
// still reaches the console, and returns what restores it, so that a
// test sees a silent drop noticed in seconds.
func SetStreamCheck(d time.Duration) (restore func()) {
	was := streamCheck
	streamCheck = d
	return func() { streamCheck = was }
}
