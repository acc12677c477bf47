cat > /workspace/db/migrate.sql <<'SQL'
.bail on
BEGIN;
CREATE TABLE members_v2 (
    id INTEGER PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT UNIQUE,
    joined DATE NOT NULL
);
INSERT INTO members_v2 (id, first_name, last_name, email, joined)
SELECT id,
       CASE WHEN instr(full_name, ' ') > 0 THEN substr(full_name, 1, instr(full_name, ' ') - 1) ELSE full_name END,
       CASE WHEN instr(full_name, ' ') > 0 THEN substr(full_name, instr(full_name, ' ') + 1) ELSE '' END,
       NULLIF(lower(trim(coalesce(email, ''))), ''),
       substr(joined, 7, 4) || '-' || substr(joined, 4, 2) || '-' || substr(joined, 1, 2)
FROM members;
CREATE TABLE books (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    UNIQUE (title, author)
);
INSERT INTO books (title, author)
SELECT DISTINCT book_title, book_author FROM loans ORDER BY book_title, book_author;
CREATE TABLE loans_v2 (
    id INTEGER PRIMARY KEY,
    member_id INTEGER NOT NULL REFERENCES members(id),
    book_id INTEGER NOT NULL REFERENCES books(id),
    loaned DATE NOT NULL,
    returned DATE
);
INSERT INTO loans_v2 (id, member_id, book_id, loaned, returned)
SELECT l.id, l.member_id, b.id,
       substr(l.loaned, 7, 4) || '-' || substr(l.loaned, 4, 2) || '-' || substr(l.loaned, 1, 2),
       CASE WHEN l.returned IS NULL THEN NULL
            ELSE substr(l.returned, 7, 4) || '-' || substr(l.returned, 4, 2) || '-' || substr(l.returned, 1, 2) END
FROM loans AS l JOIN books AS b ON b.title = l.book_title AND b.author = l.book_author;
DROP TABLE loans;
DROP TABLE members;
ALTER TABLE members_v2 RENAME TO members;
ALTER TABLE loans_v2 RENAME TO loans;
CREATE INDEX loans_member ON loans(member_id);
PRAGMA user_version = 2;
COMMIT;
SQL
cp /workspace/db/library.db /tmp/try.db && sqlite3 /tmp/try.db < /workspace/db/migrate.sql && sqlite3 /tmp/try.db 'PRAGMA foreign_key_check; SELECT count(*) FROM loans;'
