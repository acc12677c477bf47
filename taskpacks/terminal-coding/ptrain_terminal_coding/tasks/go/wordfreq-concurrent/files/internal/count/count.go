// Package count counts words in files concurrently.
package count

import (
	"os"
	"sort"
	"strings"
	"sync"
)

type WordCount struct {
	Word  string
	Count int
}

// Words splits text into words.
func Words(text string) []string {
	return strings.Fields(text)
}

// Files counts the words of all files, one goroutine per file.
func Files(paths []string) (map[string]int, []error) {
	counts := map[string]int{}
	var errs []error
	var wg sync.WaitGroup
	for _, path := range paths {
		go func(path string) {
			wg.Add(1)
			defer wg.Done()
			data, err := os.ReadFile(path)
			if err != nil {
				errs = append(errs, err)
				return
			}
			for _, w := range Words(string(data)) {
				counts[w]++
			}
		}(path)
	}
	wg.Wait()
	return counts, errs
}

// Sorted orders counts by count, highest first.
func Sorted(counts map[string]int) []WordCount {
	out := make([]WordCount, 0, len(counts))
	for w, c := range counts {
		out = append(out, WordCount{w, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}
