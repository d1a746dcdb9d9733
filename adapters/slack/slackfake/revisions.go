package slackfake

// EditReply changes the words of reply m (see AddReply) as its writer
// would, and returns the message_changed event Slack sends for it (the
// message as it is now and as it was), built from the fixture, with a new
// event id. Text equal to m's is an edit Slack makes itself (a link
// unfurled, a language tagged): the event names no change of words.
func (f *Fake) EditReply(m Message, text string) (body []byte, eventID string) {
	f.mu.Lock()
	editTS := f.nextTS()
	if stored := f.find(m.Channel, m.TS); stored != nil {
		stored.Text = text
		stored.Edits++
		stored.EditedTS = editTS
	}
	f.notify()
	f.mu.Unlock()
	now := m
	now.Text, now.Edits, now.EditedTS = text, m.Edits+1, editTS
	return f.revision("slack-event-message-changed.json", m, editTS, func(ev map[string]any) {
		ev["message"] = f.replyWire(now)
	})
}

// DeleteReply removes reply m (see AddReply) from the thread and returns
// the message_deleted event Slack sends for it, built from the fixture,
// with a new event id.
func (f *Fake) DeleteReply(m Message) (body []byte, eventID string) {
	f.mu.Lock()
	for i, x := range f.messages {
		if x.Channel == m.Channel && x.TS == m.TS {
			f.messages = append(f.messages[:i], f.messages[i+1:]...)
			break
		}
	}
	ts := f.nextTS()
	f.notify()
	f.mu.Unlock()
	return f.revision("slack-event-message-deleted.json", m, ts, func(ev map[string]any) {
		ev["deleted_ts"] = m.TS
	})
}

// revision builds the event of fixture name for a change, at ts, to
// reply m as it was; set fills in what the change itself says.
func (f *Fake) revision(name string, m Message, ts string, set func(ev map[string]any)) ([]byte, string) {
	return f.callback(name, func(ev map[string]any) {
		ev["channel"], ev["ts"], ev["event_ts"] = m.Channel, ts, ts
		ev["previous_message"] = f.replyWire(m)
		set(ev)
	})
}

// replyWire is reply m as a revision event carries it, with the author of
// its thread's root as parent_user_id and, once edited, its last edit, as
// Slack sends it.
func (f *Fake) replyWire(m Message) map[string]any {
	out := wireMessage(&m)
	if m.EditedTS != "" {
		out["edited"] = map[string]any{"user": m.User, "ts": m.EditedTS}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if root := f.find(m.Channel, m.ThreadTS); m.ThreadTS != "" && root != nil {
		out["parent_user_id"] = root.User
	}
	return out
}
