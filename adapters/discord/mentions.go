package discord

import (
	"github.com/askbridge/askbridge/core"
	"github.com/bwmarrin/discordgo"
)

// maxAllowedIDs is the most ids Discord takes in allowed_mentions.users,
// and in .roles: more and it refuses the message.
const maxAllowedIDs = 100

// discordMentions writes a reminder's mentions as <@id> and <@&role>,
// as many as fit in room and in allowed_mentions, then "…and N more" for
// the rest; and the allowed mentions that let exactly those named notify.
func discordMentions(ms []core.Mention, room int) (string, *discordgo.MessageAllowedMentions) {
	var safe []core.Mention
	for _, m := range ms {
		if m.Safe() {
			safe = append(safe, m)
		}
	}
	// parts are the first of them, up to the 100th user or role.
	var parts []string
	users, roles := 0, 0
	for _, m := range safe {
		if m.Role {
			roles++
		} else {
			users++
		}
		if users > maxAllowedIDs || roles > maxAllowedIDs {
			break
		}
		if m.Role {
			parts = append(parts, "<@&"+m.ID+">")
		} else {
			parts = append(parts, "<@"+m.ID+">")
		}
	}
	who, n := unit.JoinFit(parts, " ", len(safe), room)
	allowed := noMentions()
	for _, m := range safe[:n] {
		if m.Role {
			allowed.Roles = append(allowed.Roles, m.ID)
		} else {
			allowed.Users = append(allowed.Users, m.ID)
		}
	}
	return who, allowed
}
