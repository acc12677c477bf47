package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/acme/invoicer/internal/invoice"
)

func main() {
	var inv invoice.Invoice
	for _, arg := range os.Args[1:] {
		item, price, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintln(os.Stderr, "usage: invoicer ITEM=PRICE...")
			os.Exit(2)
		}
		if err := inv.Add(item, price); err != nil {
			fmt.Fprintln(os.Stderr, "invoicer:", err)
			os.Exit(1)
		}
	}
	fmt.Print(inv.Render())
}
