package core

import "time"

// StandingUse is what a resolution keeps of the standing approval that
// closed it: which one, and who granted it when.
type StandingUse struct {
	ID        string    `json:"id"`
	GrantedBy Decider   `json:"granted_by"`
	GrantedAt time.Time `json:"granted_at"`
}
