package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"strconv"
	"strings"

	"example.com/itemsd/store"
)

type server struct{ db *store.Store }

func (s *server) items(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		json.NewEncoder(w).Encode(s.db.List())
	case http.MethodPost:
		var in struct {
			Name       string `json:"name"`
			PriceCents int    `json:"price_cents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		json.NewEncoder(w).Encode(s.db.Create(in.Name, in.PriceCents))
	}
}

func (s *server) item(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/items/"))
	switch r.Method {
	case http.MethodGet:
		it := s.db.Get(id)
		if it == nil {
			w.WriteHeader(500)
		}
		json.NewEncoder(w).Encode(it)
	case http.MethodDelete:
		s.db.Delete(id)
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
