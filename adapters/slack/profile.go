package slack

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
)

// profile is what users.info says of a person that the adapter reads:
// their display name, and the Enterprise Grid organisation they belong
// to ("" for none).
type profile struct{ name, org string }

// profileOf is user's profile (users.info, cached); a call that fails is
// an error, and nothing is cached.
func (a *Adapter) profileOf(ctx context.Context, user string) (profile, error) {
	if p, ok := a.profiles.get(user); ok {
		return p, nil
	}
	u, err := a.api.GetUserInfoContext(ctx, user)
	if err != nil {
		return profile{}, fmt.Errorf("users.info: %w", err)
	}
	p := profile{name: u.Profile.DisplayName, org: u.Enterprise.EnterpriseID}
	for _, n := range []string{u.RealName, u.Profile.RealName, u.Name} {
		if p.name == "" {
			p.name = n
		}
	}
	a.profiles.put(user, p)
	return p, nil
}

// personUnseen names the errors Slack documents for users.info itself
// (docs.slack.dev): the id names no user, or none the app may see.
var personUnseen = map[string]bool{
	"user_not_found":   true,
	"user_not_visible": true,
}

// profileNeverRead reports whether err, a failed profileOf, is one that
// asking again cannot change: users.info cannot show the person
// (personUnseen), or refuses the app's token for good or lacks its
// users:read scope (permanentErrors). A rate limit, a 5xx, an
// internal_error or a call that failed on the way may pass.
func profileNeverRead(err error) bool {
	se, ok := errors.AsType[slack.SlackErrorResponse](err)
	return ok && (personUnseen[se.Err] || permanentErrors[se.Err])
}

// name is the person's display name for cards and notes (profileOf),
// else the name the payload carried, else nothing (cards then show the
// id).
func (a *Adapter) name(ctx context.Context, user, payloadName string) string {
	p, err := a.profileOf(ctx, user)
	if err != nil {
		a.log.Debug().Err(err).Msg("users.info failed; using the name the event carried")
		return payloadName
	}
	if p.name == "" {
		return payloadName
	}
	return p.name
}
