// Package money parses and formats amounts in cents.
package money

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse turns "3.50" into 350 cents.
func Parse(text string) (int64, error) {
	whole, frac, _ := strings.Cut(text, ".")
	if len(frac) > 2 {
		return 0, fmt.Errorf("too many decimals in %q", text)
	}
	frac = (frac + "00")[:2]
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, err
	}
	return w*100 + f, nil
}

// Format turns 775 cents into "7.75".
func Format(cents int64) string {
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}
