package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"example.com/todo/store"
)

func main() {
	file := flag.String("file", "todo.json", "the task file")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: todo [-file PATH] add TEXT... | list")
		os.Exit(2)
	}
	l, err := store.Load(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "todo:", err)
		os.Exit(1)
	}
	switch args[0] {
	case "add":
		l.Add(strings.Join(args[1:], " "))
	case "list":
		for _, t := range l.Tasks {
			fmt.Printf("%d %s\n", t.ID, t.Text)
		}
	}
	l.Save(*file)
}
