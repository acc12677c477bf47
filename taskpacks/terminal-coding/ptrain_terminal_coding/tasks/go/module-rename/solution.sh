cd /workspace && grep -rl 'github.com/acme/invoicer' --include='*.go' --include='*.md' . | xargs sed -i 's#github.com/acme/invoicer#example.com/billing/invoicer#g'
sed -i 's/^func Parse(/func ParseCents(/; s#^// Parse turns#// ParseCents turns#' internal/money/money.go
sed -i 's/money\.Parse(/money.ParseCents(/g' internal/invoice/invoice.go
GOCACHE=/tmp/gocache go build ./... && GOCACHE=/tmp/gocache go vet ./... && GOCACHE=/tmp/gocache go run ./cmd/invoicer coffee=3.50 cake=4.25
