cat > /workspace/statement.sql <<'SQL'
WITH running AS (
    SELECT t.id, t.account_id, t.posted_on, t.amount_cents,
           a.name,
           a.opening_cents + SUM(t.amount_cents) OVER (
               PARTITION BY t.account_id ORDER BY t.posted_on, t.id
               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS balance_cents
    FROM transactions AS t JOIN accounts AS a ON a.id = t.account_id
)
SELECT name, posted_on, amount_cents, balance_cents,
       CASE WHEN balance_cents < 0 THEN 1 ELSE 0 END AS overdrawn,
       DENSE_RANK() OVER (PARTITION BY account_id, substr(posted_on, 1, 7) ORDER BY amount_cents DESC) AS month_rank
FROM running
WHERE posted_on BETWEEN '2024-01-01' AND '2024-12-31'
ORDER BY name, posted_on, id;
SQL
sqlite3 /workspace/bank.db < /workspace/statement.sql | head -3
