cd /workspace && cat > internal/count/count.go <<'GO'
// Package count counts words in files concurrently.
package count

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode"
)

type WordCount struct {
	Word  string
	Count int
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\''
}

// Words splits text into lower-case words: runs of letters, digits and apostrophes, apostrophes trimmed.
func Words(text string) []string {
	var out []string
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !isWordRune(r) }) {
		w := strings.Trim(run, "'")
		if w != "" {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

type result struct {
	index  int
	counts map[string]int
	err    error
}

// Files counts the words of all files, one goroutine per file; errors come back in the order of paths.
func Files(paths []string) (map[string]int, []error) {
	results := make([]result, len(paths))
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Add(1)
		go func(i int, path string) {
			defer wg.Done()
			data, err := os.ReadFile(path)
			if err != nil {
				results[i] = result{i, nil, fmt.Errorf("%s: %w", path, unwrap(err))}
				return
			}
			c := map[string]int{}
			for _, w := range Words(string(data)) {
				c[w]++
			}
			results[i] = result{i, c, nil}
		}(i, path)
	}
	wg.Wait()
	counts := map[string]int{}
	var errs []error
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		for w, n := range r.counts {
			counts[w] += n
		}
	}
	return counts, errs
}

func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Sorted orders counts by count, highest first, then by word.
func Sorted(counts map[string]int) []WordCount {
	out := make([]WordCount, 0, len(counts))
	for w, c := range counts {
		out = append(out, WordCount{w, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Word < out[j].Word
	})
	return out
}
GO
python3 - <<'PY'
from pathlib import Path
p = Path("main.go")
s = p.read_text()
s = s.replace("""	for _, wc := range count.Sorted(counts) {
		fmt.Printf("%d %s\\n", wc.Count, wc.Word)
	}
	_ = top
""", """	for i, wc := range count.Sorted(counts) {
		if *top > 0 && i >= *top {
			break
		}
		fmt.Printf("%d %s\\n", wc.Count, wc.Word)
	}
""")
p.write_text(s)
PY
GOCACHE=/tmp/gocache go build -o wordfreq . && echo "Hello hello, 'tis'" > /tmp/a.txt && ./wordfreq /tmp/a.txt && rm -f wordfreq
