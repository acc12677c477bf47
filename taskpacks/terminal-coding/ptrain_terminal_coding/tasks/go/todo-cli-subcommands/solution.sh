cd /workspace && cat > store/store.go <<'GO'
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
	Done bool   `json:"done"`
}

type List struct {
	NextID int    `json:"next_id"`
	Tasks  []Task `json:"tasks"`
}

func Load(path string) (*List, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &List{NextID: 1, Tasks: []Task{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var l List
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, err
	}
	if l.NextID == 0 {
		l.NextID = 1
		for _, t := range l.Tasks {
			if t.ID >= l.NextID {
				l.NextID = t.ID + 1
			}
		}
	}
	if l.Tasks == nil {
		l.Tasks = []Task{}
	}
	return &l, nil
}

func (l *List) Save(path string) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (l *List) Add(text string) Task {
	t := Task{ID: l.NextID, Text: text}
	l.NextID++
	l.Tasks = append(l.Tasks, t)
	return t
}

func (l *List) find(id int) int {
	for i, t := range l.Tasks {
		if t.ID == id {
			return i
		}
	}
	return -1
}

func (l *List) SetDone(id int, done bool) bool {
	i := l.find(id)
	if i < 0 {
		return false
	}
	l.Tasks[i].Done = done
	return true
}

func (l *List) Remove(id int) bool {
	i := l.find(id)
	if i < 0 {
		return false
	}
	l.Tasks = append(l.Tasks[:i], l.Tasks[i+1:]...)
	return true
}
GO
cat > main.go <<'GO'
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"example.com/todo/store"
)

const usage = "usage: todo [-file PATH] add TEXT... | list [-all] [-json] | done ID | undo ID | rm ID"

func die(status int, msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(status)
}

func main() {
	file := flag.String("file", "todo.json", "the task file")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		die(2, usage)
	}
	l, err := store.Load(*file)
	if err != nil {
		die(1, "todo: "+err.Error())
	}
	switch args[0] {
	case "add":
		t := l.Add(strings.Join(args[1:], " "))
		fmt.Printf("added %d\n", t.ID)
	case "list":
		fs := flag.NewFlagSet("list", flag.ContinueOnError)
		all := fs.Bool("all", false, "")
		asJSON := fs.Bool("json", false, "")
		if err := fs.Parse(args[1:]); err != nil {
			die(2, usage)
		}
		shown := []store.Task{}
		for _, t := range l.Tasks {
			if *all || !t.Done {
				shown = append(shown, t)
			}
		}
		if *asJSON {
			data, _ := json.Marshal(shown)
			fmt.Println(string(data))
		} else {
			for _, t := range shown {
				mark := " "
				if t.Done {
					mark = "x"
				}
				fmt.Printf("%d [%s] %s\n", t.ID, mark, t.Text)
			}
		}
		return
	case "done", "undo", "rm":
		if len(args) != 2 {
			die(2, usage)
		}
		id, err := strconv.Atoi(args[1])
		if err != nil {
			die(2, usage)
		}
		var ok bool
		if args[0] == "rm" {
			ok = l.Remove(id)
		} else {
			ok = l.SetDone(id, args[0] == "done")
		}
		if !ok {
			die(1, fmt.Sprintf("todo: no task %d", id))
		}
		word := map[string]string{"done": "done", "undo": "undone", "rm": "removed"}[args[0]]
		fmt.Printf("%s %d\n", word, id)
	default:
		die(2, usage)
	}
	if err := l.Save(*file); err != nil {
		die(1, "todo: "+err.Error())
	}
}
GO
GOCACHE=/tmp/gocache go build -o /tmp/todo . && /tmp/todo -file /tmp/t.json add milk
