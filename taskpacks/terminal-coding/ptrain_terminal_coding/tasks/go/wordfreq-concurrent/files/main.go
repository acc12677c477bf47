package main

import (
	"flag"
	"fmt"
	"os"

	"example.com/wordfreq/internal/count"
)

func main() {
	top := flag.Int("top", 0, "print only the N most frequent words")
	flag.Parse()
	counts, errs := count.Files(flag.Args())
	for _, err := range errs {
		fmt.Fprintln(os.Stderr, "wordfreq:", err)
	}
	for _, wc := range count.Sorted(counts) {
		fmt.Printf("%d %s\n", wc.Count, wc.Word)
	}
	_ = top
	if len(errs) > 0 {
		os.Exit(1)
	}
}
