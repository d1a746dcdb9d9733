package core

import "context"

// maxQuestionEvents bounds one question's history as a door reads it; a
// question refused thousands of times still pages, it does not flood.
const maxQuestionEvents = 1000

// QuestionEvents returns one question's events, oldest first, at most
// limit (<= 0 or above the cap means the cap), through the store's index
// of them rather than a walk of the whole log. A malformed id has none.
func (s *Service) QuestionEvents(ctx context.Context, id QuestionID, limit int) ([]Event, error) {
	if !ValidID(id) {
		return nil, nil
	}
	if limit <= 0 || limit > maxQuestionEvents {
		limit = maxQuestionEvents
	}
	evs, err := s.store.QuestionEvents(ctx, id, limit)
	return evs, Internal("question events", err)
}
