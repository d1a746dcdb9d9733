package telegramfake

import "time"

// SetLatency makes sendMessage and editMessageText take d before they
// answer, as Telegram's servers take tens of milliseconds.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// Limit makes sendMessage answer 429 (retry_after 1) as Telegram does
// past its limits: a message into a chat less than limitGap after the
// last one accepted there, or more than thirty accepted in the last
// second in all. Sent returns when each accepted message came, TooMany
// how many 429s were answered.
func (s *Server) Limit() {
	s.mu.Lock()
	s.limited, s.lastSent = true, map[int64]time.Time{}
	s.mu.Unlock()
}

// limitGap is the least time between two messages into one chat that the
// fake accepts: Telegram asks for about one a second and lets short
// bursts through, so a sender pacing one a second passes even when the
// network shifts two sends closer by some milliseconds.
const limitGap = 900 * time.Millisecond

// TooMany is how many sends the fake refused with 429.
func (s *Server) TooMany() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tooMany
}

// Sent is when each message the fake accepted while limited came in.
func (s *Server) Sent() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.sentAt...)
}

// overLimit reports, for a sendMessage into chat at now, whether Telegram
// would refuse it, and records it as accepted if not. The caller holds
// s.mu.
func (s *Server) overLimit(chat int64, now time.Time) bool {
	if !s.limited {
		return false
	}
	recent := 0
	for i := len(s.sentAt) - 1; i >= 0 && now.Sub(s.sentAt[i]) < time.Second; i-- {
		recent++
	}
	if last, ok := s.lastSent[chat]; (ok && now.Sub(last) < limitGap) || recent >= 30 {
		s.tooMany++
		return true
	}
	s.lastSent[chat] = now
	s.sentAt = append(s.sentAt, now)
	return false
}
