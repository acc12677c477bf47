// Package store keeps tasks in a JSON file.
package store

import (
	"encoding/json"
	"errors"
	"os"
)

type Task struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

type List struct {
	Tasks []Task `json:"tasks"`
}

func Load(path string) (*List, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &List{}, nil
	}
	if err != nil {
		return nil, err
	}
	var l List
	return &l, json.Unmarshal(data, &l)
}

func (l *List) Save(path string) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func (l *List) Add(text string) Task {
	t := Task{ID: len(l.Tasks) + 1, Text: text}
	l.Tasks = append(l.Tasks, t)
	return t
}
