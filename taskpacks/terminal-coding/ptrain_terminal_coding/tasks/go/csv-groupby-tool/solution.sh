cd /workspace && cat > main.go <<'GO'
// csvsum: group CSV rows by one column and sum another (exact, in cents).
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "csvsum: "+format+"\n", args...)
	os.Exit(2)
}

// cents parses "12", "12.5", "-0.75" exactly.
func cents(text string) (int64, bool) {
	if text == "" {
		return 0, true
	}
	neg := strings.HasPrefix(text, "-")
	t := strings.TrimPrefix(text, "-")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" || len(frac) > 2 {
		return 0, false
	}
	frac = (frac + "00")[:2]
	w, err1 := strconv.ParseUint(whole, 10, 62)
	f, err2 := strconv.ParseUint(frac, 10, 8)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	v := int64(w*100 + f)
	if neg {
		v = -v
	}
	return v, true
}

func format(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

func main() {
	by := flag.String("by", "", "column to group by")
	sum := flag.String("sum", "", "column to sum")
	sep := flag.String("sep", ",", "separator")
	flag.Parse()
	if len([]rune(*sep)) != 1 {
		die("-sep must be one character")
	}
	r := csv.NewReader(os.Stdin)
	r.Comma = []rune(*sep)[0]
	header, err := r.Read()
	if err != nil {
		die("reading the header: %v", err)
	}
	bi, si := -1, -1
	for i, name := range header {
		if name == *by {
			bi = i
		}
		if name == *sum {
			si = i
		}
	}
	if bi < 0 || si < 0 {
		die("no column %q or %q in the header", *by, *sum)
	}
	totals, counts := map[string]int64{}, map[string]int{}
	for {
		line, _ := r.FieldPos(0)
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			die("%v", err)
		}
		line, _ = r.FieldPos(0)
		v, ok := cents(rec[si])
		if !ok {
			die("line %d: %q is not a number", line, rec[si])
		}
		totals[rec[bi]] += v
		counts[rec[bi]]++
	}
	keys := make([]string, 0, len(totals))
	for k := range totals {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if totals[keys[i]] != totals[keys[j]] {
			return totals[keys[i]] > totals[keys[j]]
		}
		return keys[i] < keys[j]
	})
	w := csv.NewWriter(os.Stdout)
	w.Write([]string{*by, "sum", "count"})
	for _, k := range keys {
		w.Write([]string{k, format(totals[k]), strconv.Itoa(counts[k])})
	}
	w.Flush()
}
GO
GOCACHE=/tmp/gocache go build -o csvsum . && printf 'city,amount\nOslo,10\nRome,2.5\nOslo,-0.5\n' | ./csvsum -by city -sum amount; rm -f csvsum
