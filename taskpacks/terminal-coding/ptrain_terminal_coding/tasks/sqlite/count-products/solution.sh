sqlite3 /workspace/shop.db 'SELECT COUNT(*) FROM products;' > /workspace/count.txt
