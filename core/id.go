package core

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

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
func NewID(shard int) string {
	if shard < 0 || shard >= MaxShards {
		panic("core: shard out of range")
	}
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("core: no randomness: " + err.Error())
	}
	return idEncoding.EncodeToString([]byte{byte(shard << 3)})[:1] + idEncoding.EncodeToString(b[:])
}

// ShardOf returns the shard an id names, or -1 if s is not shaped like a
// question id. Stores use it to place every key of a question in one hash
// slot.
func ShardOf(id string) int {
	if !ValidID(id) {
		return -1
	}
	return strings.IndexByte(idAlphabet, id[0])
}

// ValidID reports whether s is shaped like a question id. Doors check it
// before touching the store, and answer a malformed id exactly like an
// unknown one.
func ValidID(s string) bool {
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
