package slack

import (
	"context"
	"fmt"
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
