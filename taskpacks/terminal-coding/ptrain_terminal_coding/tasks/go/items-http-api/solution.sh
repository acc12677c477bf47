cd /workspace && cat > store/store.go <<'GO'
// Package store keeps items in memory, safe for concurrent use.
package store

import (
	"sort"
	"sync"
)

type Item struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	PriceCents int    `json:"price_cents"`
}

type Store struct {
	mu     sync.Mutex
	items  map[int]*Item
	nextID int
}

func New() *Store { return &Store{items: map[int]*Item{}, nextID: 1} }

func (s *Store) Create(name string, price int) Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := &Item{ID: s.nextID, Name: name, PriceCents: price}
	s.items[it.ID] = it
	s.nextID++
	return *it
}

func (s *Store) Get(id int) (Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[id]
	if !ok {
		return Item{}, false
	}
	return *it, true
}

func (s *Store) Delete(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.items[id]
	delete(s.items, id)
	return ok
}

// List returns items in id order.
func (s *Store) List() []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Item, 0, len(s.items))
	for _, it := range s.items {
		out = append(out, *it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
GO
cat > main.go <<'GO'
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"

	"example.com/itemsd/store"
)

type server struct{ db *store.Store }

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		json.NewEncoder(w).Encode(v)
	}
}

func fail(w http.ResponseWriter, status int, msg string) {
	reply(w, status, map[string]string{"error": msg})
}

func intParam(r *http.Request, name string, def int) (int, bool) {
	text := r.URL.Query().Get(name)
	if text == "" {
		return def, true
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func (s *server) items(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		limit, ok1 := intParam(r, "limit", 50)
		offset, ok2 := intParam(r, "offset", 0)
		if !ok1 || !ok2 {
			fail(w, 400, "limit and offset must be non-negative integers")
			return
		}
		if limit > 100 {
			limit = 100
		}
		all := s.db.List()
		if offset > len(all) {
			offset = len(all)
		}
		all = all[offset:]
		if limit < len(all) {
			all = all[:limit]
		}
		reply(w, 200, all)
	case http.MethodPost:
		var in struct {
			Name       *string `json:"name"`
			PriceCents int     `json:"price_cents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			fail(w, 400, "invalid JSON: "+err.Error())
			return
		}
		if in.Name == nil || *in.Name == "" {
			fail(w, 400, "name is required")
			return
		}
		if in.PriceCents < 0 {
			fail(w, 400, "price_cents must not be negative")
			return
		}
		it := s.db.Create(*in.Name, in.PriceCents)
		w.Header().Set("Location", fmt.Sprintf("/items/%d", it.ID))
		reply(w, 201, it)
	default:
		fail(w, 405, "method not allowed")
	}
}

func (s *server) item(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/items/"))
	if err != nil {
		fail(w, 400, "bad id")
		return
	}
	switch r.Method {
	case http.MethodGet:
		it, ok := s.db.Get(id)
		if !ok {
			fail(w, 404, "not found")
			return
		}
		reply(w, 200, it)
	case http.MethodDelete:
		if !s.db.Delete(id) {
			fail(w, 404, "not found")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		fail(w, 405, "method not allowed")
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8000", "listen address")
	flag.Parse()
	s := &server{db: store.New()}
	http.HandleFunc("/items", s.items)
	http.HandleFunc("/items/", s.item)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
GO
GOCACHE=/tmp/gocache go build -o /tmp/itemsd . && echo built
