-- version 1 of the library database
CREATE TABLE members (
    id INTEGER PRIMARY KEY,
    full_name TEXT NOT NULL,          -- "First Last" (first name = up to the first space)
    email TEXT,
    joined TEXT NOT NULL              -- 'DD/MM/YYYY'
);
CREATE TABLE loans (
    id INTEGER PRIMARY KEY,
    member_id INTEGER NOT NULL,
    book_title TEXT NOT NULL,
    book_author TEXT NOT NULL,
    loaned TEXT NOT NULL,             -- 'DD/MM/YYYY'
    returned TEXT                     -- 'DD/MM/YYYY' or NULL
);
