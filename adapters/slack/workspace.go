package slack

import (
	"context"
	"errors"

	"github.com/askbridge/askbridge/core"
)

// workspace is the workspace the bot is installed in, as auth.test names
// it: its team id and, in an Enterprise Grid organisation, the
// organisation's id (Slack reports a grid user's user.team_id in an
// interaction payload as the organisation's E… id rather than their
// workspace's T… id; a message event's user_team names the workspace).
type workspace struct{ team, enterprise string }

// has reports whether team, a user's own workspace as Slack names it,
// is this one (or its organisation).
func (w *workspace) has(team string) bool {
	return team != "" && (team == w.team || team == w.enterprise)
}

// ourTeam is our workspace, asked of auth.test again if Run could not
// learn it.
func (a *Adapter) ourTeam(ctx context.Context) (*workspace, error) {
	if w := a.team.Load(); w != nil {
		return w, nil
	}
	a.whoAmI(ctx)
	if w := a.team.Load(); w != nil {
		return w, nil
	}
	return nil, errors.New("auth.test did not say which workspace the bot is in")
}

// outsider reports whether d, a user of workspace team, is from another
// organisation (a Slack Connect channel shared with ours) whom only "*"
// would let answer q: on Slack, "*" means the members of the bot's own
// workspace, or in an Enterprise Grid of its organisation (a member of
// another of its workspaces, whose messages name that workspace, is
// known by the organisation in their profile), so core is told
// (Decider.Outsider), refuses them and records it. A route that names
// them (by id, by a user group as role:S…, or as a person) still lets
// them in. A team Slack did not name is not compared, and which
// workspace is ours is asked only for those "*" alone lets in (a named
// user counts while auth.test fails). While a group that could not be
// read might be the one naming them (core, asked with them in it, lets
// them in by more than "*"), or their organisation cannot be read just
// then (a rate limit, a 5xx), which they are is unknown: an error to try
// again after. An organisation users.info will never tell
// (profileNeverRead: user_not_found, a token refused for good) is not
// ours: asked again, the person would be told "try again" for ever.
func (a *Adapter) outsider(ctx context.Context, q *core.Question, d core.Decider, team string, unread unreadGroups) (bool, error) {
	if team == "" || !a.svc.OnlyAnyone(q, d) {
		return false, nil
	}
	ours, err := a.ourTeam(ctx)
	if err != nil {
		return false, core.Internal("slack workspace", err)
	}
	if ours.has(team) {
		return false, nil
	}
	if ours.enterprise != "" {
		// A message names the writer's own workspace (user_team, T…)
		// where a click names their organisation: a member of another
		// workspace of ours is told from one of another organisation by
		// users.info's enterprise_user.
		p, err := a.profileOf(ctx, d.ID)
		switch {
		case err == nil && p.org == ours.enterprise:
			return false, nil
		case err != nil && !profileNeverRead(err):
			return false, core.Internal("slack user's organisation", err)
		case err != nil:
			// Asking again cannot tell: not known as ours, so refused
			// where "*" alone would let them in, and recorded, rather
			// than told to try again at every reply.
			a.log.Warn().Err(err).Msg("slack: users.info will not tell a person's organisation; refused where \"*\" alone would let them in")
		}
	}
	if unread.err != nil && !a.svc.OnlyAnyone(q, unread.in(d)) {
		return false, core.Internal("slack user groups", unread.err)
	}
	return true, nil
}
