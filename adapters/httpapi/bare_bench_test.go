package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/askbridge/askbridge/adapters/internal/access"
)

// bareAPI is the yardstick of the wake-up burst: the least an HTTP
// bridge of long polls does, on the same paths as the API, so that the
// benchmark's clients run unchanged against it. It checks the bearer
// token, decodes each answer's JSON and hands it to the question's
// parked wait, which writes it back as JSON; it keeps nothing, closes
// nothing and renders no view. A burst against it, in a process of its
// own on the same machine, times what the machine, Go's HTTP server and
// the benchmark's own clients cost: what is left of the bridge's p99 over
// the bare server's is the bridge's.
func bareAPI(watching func(id string)) (http.Handler, error) {
	keys, err := access.NewKeys(tokens)
	if err != nil {
		return nil, err
	}
	f := &bare{waits: map[string]chan string{}, watching: watching, keys: keys}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/questions", f.ask)
	mux.HandleFunc("GET /v1/questions/{id}", f.get)
	mux.HandleFunc("GET /v1/questions/{id}/wait", f.wait)
	mux.HandleFunc("POST /v1/questions/{id}/answer", f.answer)
	return f.authorized(mux), nil
}

type bare struct {
	next     atomic.Int64
	watching func(id string)
	keys     *access.Keys // the API's own token match
	mu       sync.Mutex
	waits    map[string]chan string // by question id; each holds its answer once given
}

// bareView is what the bare server answers with: a question's id and, once
// answered, its answer.
type bareView struct {
	ID     string `json:"id"`
	Answer string `json:"answer,omitempty"`
}

func (f *bare) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, ok := f.keys.Find(got); !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// answerOf is question id's channel, made on first use.
func (f *bare) answerOf(id string) chan string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.waits[id]
	if !ok {
		c = make(chan string, 1)
		f.waits[id] = c
	}
	return c
}

func (f *bare) ask(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := "q" + strconv.FormatInt(f.next.Add(1), 10)
	f.answerOf(id)
	writeBare(w, http.StatusCreated, bareView{ID: id})
}

func (f *bare) get(w http.ResponseWriter, r *http.Request) {
	writeBare(w, http.StatusOK, bareView{ID: r.PathValue("id")})
}

func (f *bare) wait(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c := f.answerOf(id)
	f.watching(id)
	select {
	case a := <-c:
		writeBare(w, http.StatusOK, bareView{ID: id, Answer: a})
	case <-r.Context().Done():
	}
}

func (f *bare) answer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Answer string `json:"answer"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := r.PathValue("id")
	select {
	case f.answerOf(id) <- body.Answer:
		writeBare(w, http.StatusOK, bareView{ID: id, Answer: body.Answer})
	default:
		http.Error(w, "answered already", http.StatusConflict)
	}
}

func writeBare(w http.ResponseWriter, status int, v bareView) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
