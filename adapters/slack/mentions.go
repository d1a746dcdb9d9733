package slack

import "github.com/askbridge/askbridge/core"

// slackMentions writes a reminder's mentions in Slack's syntax: a user
// as <@U…>, a user group as <!subteam^S…>, so Slack notifies them; as
// many as fit in room (what the section has left), then "…and N more".
func slackMentions(ms []core.Mention, room int) string {
	var parts []string
	for _, m := range ms {
		switch {
		case !m.Safe():
		case m.Role:
			parts = append(parts, "<!subteam^"+m.ID+">")
		default:
			parts = append(parts, "<@"+m.ID+">")
		}
	}
	who, _ := unit.JoinFit(parts, " ", len(parts), room)
	return who
}
