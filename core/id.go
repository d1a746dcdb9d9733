package core

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// QuestionID names one question. It and the other ids below are distinct
// types, not plain strings, so that one kind of id cannot be passed where
// another belongs: a run id handed to Get, or an agent given as a question,
// no longer compiles. Their JSON is the plain string, so the wire and the
// stored records are as they were. Text becomes an id only where it comes
// in (a path, a button, a store's reply) and turns back into text only where
// it goes out.
type QuestionID string

// AgentID names the agent that asked, as its token or its ask says.
type AgentID string

// RunID names one of an agent's runs; it means something only with its
// agent (Run).
type RunID string

// idAlphabet is lower-case base32: URL-, callback- and custom_id-safe,
// and in one case, so an id reads aloud without spelling out capitals.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

var idEncoding = base32.NewEncoding(idAlphabet).WithPadding(base32.NoPadding)

// IDLen is the length of a question id: one shard character and 16
// characters (80 bits) of randomness. Short enough that an id and an
// option reference fit a Telegram callback of 64 bytes with room to spare,
// long enough that ids cannot be guessed.
const IDLen = 17

// MaxShards is how many shards an id can name (one base32 character).
const MaxShards = 32

// NewID returns a fresh question id in the given shard.
func NewID(shard int) QuestionID {
	if shard < 0 || shard >= MaxShards {
		panic("core: shard out of range")
	}
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("core: no randomness: " + err.Error())
	}
	return QuestionID(idEncoding.EncodeToString([]byte{byte(shard << 3)})[:1] + idEncoding.EncodeToString(b[:]))
}

// ShardOf returns the shard an id names, or -1 if id is not shaped like a
// question id. Stores use it to place every key of a question in one hash
// slot.
func ShardOf(id QuestionID) int {
	if !ValidID(id) {
		return -1
	}
	return strings.IndexByte(idAlphabet, id[0])
}

// ValidID reports whether s is shaped like a question id. Doors check it
// before touching the store, and answer a malformed id exactly like an
// unknown one.
func ValidID(s QuestionID) bool {
	if len(s) != IDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}
