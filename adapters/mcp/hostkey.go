package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
)

// The key of the host door's form in inputRequests. The Tasks extension
// says a key names one request over a task's life and is not used again
// once a response for it was delivered, so that a host may show each key
// once, and a server ignores responses to keys that are not outstanding
// (never issued, answered, or superseded). The form of one question is
// not one request, though: once chat answers an item, or the host answers
// some, it asks less; once a reply was refused, it is asked again. So the
// key is made from what the form asks (the question's id, its message and
// its schema) and the round it is asked in: each distinct form has its
// own, a key is the same for as long as its form stands, and nothing is
// stored to remember it, since any replica makes the same key from the
// question as stored.
//
// A task has no rounds (it has no state of its own to count them in): its
// form changes with what is left to ask, and a reply core refuses is
// answered with an error on tasks/update, so that request is not
// answered. On 2026-07-28 without tasks, the request state carries the
// round, and a retry that asks again asks in the next.

// hostKeyPrefix begins every host form's key, and was the whole key of
// each before keys followed the form: a reply to such a key, from before
// an upgrade, is a reply to a form superseded.
const hostKeyPrefix = "askbridge-host-answer"

// hostKey is the key of form f of question id asked in round.
func hostKey(id core.QuestionID, f hostForm, round int) string {
	schema, _ := json.Marshal(f.schema) // a schema of strings and objects: it marshals
	h := sha256.New()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(round)))
	h.Write([]byte{0})
	h.Write([]byte(f.message))
	h.Write([]byte{0})
	h.Write(schema)
	return hostKeyPrefix + "-" + hex.EncodeToString(h.Sum(nil)[:10])
}

// formRequest is the input requests of f, asked in round.
func formRequest(id core.QuestionID, f hostForm, round int, note string) mcpsdk.InputRequestMap {
	msg := f.message
	if note != "" {
		msg = note + "\n\n" + msg
	}
	return mcpsdk.InputRequestMap{hostKey(id, f, round): &mcpsdk.ElicitParams{Mode: "form", Message: msg, RequestedSchema: f.schema}}
}

// stateOf is the request state of a form of question id asked in round:
// the id, and after the first round a dot and the round. It decides
// nothing but which key a reply must carry; the question is read afresh
// on every retry.
func stateOf(id core.QuestionID, round int) string {
	if round == 0 {
		return string(id)
	}
	return string(id) + "." + strconv.Itoa(round)
}

// parseState reads a request state that stateOf made; ok is false for
// one it cannot have made.
func parseState(s string) (id core.QuestionID, round int, ok bool) {
	before, after, found := strings.Cut(s, ".")
	if !found {
		return core.QuestionID(s), 0, true
	}
	n, err := strconv.Atoi(after)
	if err != nil || n < 1 || strconv.Itoa(n) != after {
		return "", 0, false
	}
	return core.QuestionID(before), n, true
}

// hostReply picks out of a retry's responses the reply to key, or else a
// reply to another form of the host door (one superseded since it was
// asked), which is read only to tell an answer from a refusal.
func hostReply(responses mcpsdk.InputResponseMap, key string) (reply, stale *mcpsdk.ElicitResult) {
	if r, ok := responses[key].(*mcpsdk.ElicitResult); ok {
		return r, nil
	}
	for k, v := range responses {
		if r, ok := v.(*mcpsdk.ElicitResult); ok && strings.HasPrefix(k, hostKeyPrefix) {
			return nil, r
		}
	}
	return nil, nil
}
