package invoice

import (
	"fmt"
	"strings"

	"github.com/acme/invoicer/internal/money"
)

func (inv *Invoice) Render() string {
	var b strings.Builder
	for _, l := range inv.Lines {
		fmt.Fprintf(&b, "%s %s\n", l.Item, money.Format(l.Cents))
	}
	fmt.Fprintf(&b, "total %s\n", money.Format(inv.Total()))
	return b.String()
}
