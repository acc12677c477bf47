-- version 2: what the new application expects (PRAGMA user_version = 2)
CREATE TABLE members (
    id INTEGER PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,          -- '' when the v1 name had no space
    email TEXT UNIQUE,                -- lowercased and trimmed; NULL when v1 had NULL or ''
    joined DATE NOT NULL              -- ISO 'YYYY-MM-DD'
);
CREATE TABLE books (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    UNIQUE (title, author)
);
CREATE TABLE loans (
    id INTEGER PRIMARY KEY,
    member_id INTEGER NOT NULL REFERENCES members(id),
    book_id INTEGER NOT NULL REFERENCES books(id),
    loaned DATE NOT NULL,             -- ISO
    returned DATE                     -- ISO or NULL
);
CREATE INDEX loans_member ON loans(member_id);
