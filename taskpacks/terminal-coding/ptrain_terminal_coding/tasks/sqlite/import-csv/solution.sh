cd /workspace && rm -f people.db && sqlite3 people.db 'CREATE TABLE people (name TEXT, age INTEGER, city TEXT);' '.import --csv --skip 1 people.csv people'
