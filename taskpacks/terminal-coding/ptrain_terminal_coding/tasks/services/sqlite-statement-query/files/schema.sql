CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, opening_cents INTEGER NOT NULL, opened_on TEXT NOT NULL);
CREATE TABLE transactions (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id),
                           posted_on TEXT NOT NULL, amount_cents INTEGER NOT NULL, memo TEXT);
