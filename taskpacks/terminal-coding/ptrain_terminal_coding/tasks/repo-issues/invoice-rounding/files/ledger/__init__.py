"""ledger: invoices."""
