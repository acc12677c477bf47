// Package invoice collects line items.
package invoice

import "github.com/acme/invoicer/internal/money"

type Line struct {
	Item  string
	Cents int64
}

type Invoice struct{ Lines []Line }

func (inv *Invoice) Add(item, price string) error {
	cents, err := money.Parse(price)
	if err != nil {
		return err
	}
	inv.Lines = append(inv.Lines, Line{item, cents})
	return nil
}

func (inv *Invoice) Total() int64 {
	var t int64
	for _, l := range inv.Lines {
		t += l.Cents
	}
	return t
}
