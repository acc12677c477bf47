// Package store keeps items in memory.
package store

type Item struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	PriceCents int    `json:"price_cents"`
}

type Store struct {
	items  map[int]*Item
	nextID int
}

func New() *Store { return &Store{items: map[int]*Item{}, nextID: 1} }

func (s *Store) Create(name string, price int) *Item {
	it := &Item{ID: s.nextID, Name: name, PriceCents: price}
	s.items[it.ID] = it
	s.nextID++
	return it
}

func (s *Store) Get(id int) *Item { return s.items[id] }

func (s *Store) Delete(id int) { delete(s.items, id) }

func (s *Store) List() []*Item {
	out := []*Item{}
	for _, it := range s.items {
		out = append(out, it)
	}
	return out
}
