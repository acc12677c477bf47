module example.com/billing/invoicer

go 1.19
