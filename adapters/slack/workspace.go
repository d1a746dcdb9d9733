package slack

import (
	"context"
	"errors"

	"github.com/askbridge/askbridge/core"
)

// workspace is the workspace the bot is installed in, as auth.test names
// it: its team id and, in an Enterprise Grid organisation, the
// organisation's id (Slack reports a grid user's user.team_id as the
// organisation's E… id rather than their workspace's T… id).
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

// foreign refuses d, a user of workspace team, when that is not ours
// (a Slack Connect channel shared with another organisation) and only
// "*" would let them answer q: on Slack, "*" means the members of the
// bot's own workspace. A route that names them (by id, by a user group
// as role:S…, or as a person) still lets them in, and one that does not
// let them in at all is left to core, which refuses and records it. A
// team Slack did not name is not compared, and which workspace is ours
// is asked only for those "*" alone lets in (a named user counts while
// auth.test fails). unread is the error of a user group that could not
// be read, which may be the one naming them.
//
// The refusal reads as core's for someone who may not answer; core
// records no event of it, as core alone decides who may answer and
// "*" lets them in there.
func (a *Adapter) foreign(ctx context.Context, q *core.Question, d core.Decider, team string, unread error) error {
	if team == "" || !a.svc.OnlyAnyone(q, d) {
		return nil
	}
	ours, err := a.ourTeam(ctx)
	if err != nil {
		return core.Internal("slack workspace", err)
	}
	if ours.has(team) {
		return nil
	}
	if unread != nil {
		return core.Internal("slack user groups", unread)
	}
	a.log.Warn().Str("question", string(q.ID)).Str("team", team).
		Msg(`slack: a user of another workspace was refused: "*" lets in the members of this workspace only`)
	return core.Errorf(core.CodeForbidden, "answer", "you may not answer this question here")
}
