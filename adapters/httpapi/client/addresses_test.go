package client_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestOperatorViewHidesAddresses: the API's view of a question names a
// one-way door's recipient by the door alone, in its cards, its answers,
// its votes and its resolution; before, an observer's token read ntfy
// topics (which work as passwords) and email addresses there. The
// question itself is left as it was.
func TestOperatorViewHidesAddresses(t *testing.T) {
	const topic, addr = "s3cret-topic-of-alice", "alice@example.com"
	ntfy := core.Decider{Surface: core.SurfaceNtfy, ID: topic}
	q := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindForm, State: core.StateAnswered,
		Messages: []core.MessageRef{{Surface: core.SurfaceNtfy, Room: topic, Delivery: "q:post:ntfy:" + topic},
			{Surface: core.SurfaceEmail, Room: addr, Delivery: "q:post:email:" + addr}, {Surface: core.SurfaceSlack, Room: "C1", Delivery: "q:post:slack:C1"}},
		Answers:    []core.ItemAnswer{{ItemID: "q1", Decider: ntfy}},
		Votes:      []core.Vote{{Key: "ntfy:" + topic, Decider: ntfy}},
		Resolution: &core.Resolution{State: core.StateAnswered, Decider: core.Decider{Surface: core.SurfaceEmail, ID: addr}}}
	raw, _ := json.Marshal(client.OperatorView(q))
	if s := string(raw); strings.Contains(s, topic) || strings.Contains(s, addr) || !strings.Contains(s, `"room":"C1"`) || !strings.Contains(s, "an ntfy subscriber") {
		t.Fatalf("the API's view: %s", s)
	}
	if q.Messages[0].Room != topic || q.Answers[0].Decider.ID != topic || q.Resolution.Decider.ID != addr {
		t.Error("the view changed the question")
	}
}

// TestOperatorViewHidesGrantors: who granted a standing approval from a
// one-way door is named by the door alone, on the resolution it closed,
// on a batch call it decided and in the standing approval itself; before,
// the API hid the decider but still showed the grantor's topic there.
func TestOperatorViewHidesGrantors(t *testing.T) {
	const topic = "s3cret-topic-of-alice"
	use := &core.StandingUse{ID: "st-1", GrantedBy: core.Decider{Surface: core.SurfaceNtfy, ID: topic}}
	q := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindApproval, State: core.StateAnswered,
		Answers:    []core.ItemAnswer{{ItemID: "c1", Decider: core.Decider{Surface: core.SurfaceSystem, ID: "askbridge"}, Standing: use}},
		Resolution: &core.Resolution{State: core.StateAnswered, Decider: core.Decider{Surface: core.SurfaceSystem, ID: "askbridge"}, Standing: use}}
	raw, _ := json.Marshal(client.OperatorView(q))
	st, _ := json.Marshal(client.ShownStanding(core.Standing{ID: "st-1", GrantedBy: use.GrantedBy}))
	if s := string(raw) + string(st); strings.Contains(s, topic) || !strings.Contains(s, "an ntfy subscriber") {
		t.Fatalf("the API's views: %s", s)
	}
	if use.GrantedBy.ID != topic {
		t.Error("the view changed the question")
	}
}

// TestOperatorViewHidesDiscountedVoters: a vote that no longer counts is
// named, in the later vote that discounted it, by its key; a one-way
// door's voter's key holds their address, so it is hidden there as on
// their own vote. Before, the API showed an ntfy topic that a reload took
// off the route in the next vote's discounted list.
func TestOperatorViewHidesDiscountedVoters(t *testing.T) {
	const topic = "s3cret-topic-of-alice"
	q := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindApproval, State: core.StateOpen, Quorum: 2,
		Votes: []core.Vote{{Key: "ntfy:" + topic, Choice: core.ApproveOption, Decider: core.Decider{Surface: core.SurfaceNtfy, ID: topic}},
			{Key: "slack:U2", Choice: core.ApproveOption, Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U2"}, Discounted: []string{"ntfy:" + topic}}}}
	raw, _ := json.Marshal(client.OperatorView(q))
	if s := string(raw); strings.Contains(s, topic) {
		t.Fatalf("the API's view: %s", s)
	}
	if q.Votes[1].Discounted[0] != "ntfy:"+topic {
		t.Error("the view changed the question")
	}
}

// TestOperatorViewCountsVotesAsCoreDoes: the view carries how an open
// question's votes count now (Question.Counted), with one-way doors'
// keys hidden alike on the votes and in the count, so a tally read from
// the view (the CLI's, after a vote) leaves out exactly the votes core
// leaves out. Before, the view had no count (a reader fell back to the
// latest vote's list), and hiding blanked every such key to "", so one
// hidden voter's uncounted vote took every other one-way door's vote
// with it; a closed question's count in its resolution showed the
// uncounted voter's topic.
func TestOperatorViewCountsVotesAsCoreDoes(t *testing.T) {
	const topic, addr = "s3cret-topic-of-alice", "bob@example.com"
	ntfy := core.Decider{Surface: core.SurfaceNtfy, ID: topic}
	mail := core.Decider{Surface: core.SurfaceEmail, ID: addr}
	votes := []core.Vote{
		{Key: "ntfy:" + topic, Choice: core.ApproveOption, Decider: ntfy},
		{Key: "email:" + addr, Choice: core.ApproveOption, Decider: mail},
		{Key: "slack:U2", Choice: core.ApproveOption, Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U2"}},
	}
	count := &core.VoteCount{Uncounted: []string{"ntfy:" + topic}}
	open := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindApproval, State: core.StateOpen, Quorum: 3, Votes: votes, Counted: count}
	want := core.TallyOf(open).Lines[0]
	if !strings.HasPrefix(want, "2 of 3 approvals") {
		t.Fatalf("core's own tally: %q", want)
	}
	v := client.OperatorView(open)
	raw, _ := json.Marshal(v)
	if s := string(raw); strings.Contains(s, topic) || strings.Contains(s, addr) || !strings.Contains(s, `"counted"`) {
		t.Fatalf("the API's view: %s", s)
	}
	var back client.Question
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got := core.TallyOf(&core.Question{Kind: back.Kind, Quorum: back.Quorum, Votes: back.Votes, Counted: back.Counted}).Lines[0]
	if !strings.HasPrefix(got, "2 of 3 approvals") {
		t.Errorf("the tally read from the view: %q; core's: %q", got, want)
	}

	closed := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindApproval, State: core.StateAnswered, Quorum: 2, Votes: votes,
		Resolution: &core.Resolution{State: core.StateAnswered, Counted: count}}
	raw, _ = json.Marshal(client.OperatorView(closed))
	if s := string(raw); strings.Contains(s, topic) || !strings.Contains(s, "ntfy:hidden-") {
		t.Fatalf("the API's view of the closed question: %s", s)
	}
	if closed.Resolution.Counted.Uncounted[0] != "ntfy:"+topic || open.Counted.Uncounted[0] != "ntfy:"+topic {
		t.Error("the view changed the question")
	}
}
