// Package waitcount counts the waits parked on each question, for the
// doors that bound them per question on a replica: the HTTP API's long
// polls (httpapi's waiters.go), MCP's waiting tool calls and MCP's task
// listen streams (each counted apart). A parked wait holds a connection,
// a file descriptor of the process, for as long as a person takes, so
// each door refuses a wait past its bound; the count is one thing,
// whatever each door answers the wait it refuses.
package waitcount

import (
	"sync"

	"github.com/askbridge/askbridge/core"
)

// Counts is how many waits are parked on each question. Its zero value
// is ready to use; it must not be copied after first use.
type Counts struct {
	mu sync.Mutex
	n  map[core.QuestionID]int
}

// Take counts one more wait parked on id, unless id has max already; it
// reports whether it counted it, and returns the release the wait calls
// when it ends. A release frees one place however often it is called:
// a wait may end on more than one path.
func (c *Counts) Take(id core.QuestionID, max int) (release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[core.QuestionID]int{}
	}
	if c.n[id] >= max {
		return nil, false
	}
	c.n[id]++
	var once sync.Once
	return func() { once.Do(func() { c.release(id) }) }, true
}

func (c *Counts) release(id core.QuestionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[id]--; c.n[id] <= 0 {
		delete(c.n, id) // the map holds only questions being waited on
	}
}

// Questions is how many questions have waits parked on them.
func (c *Counts) Questions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.n)
}
