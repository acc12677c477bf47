cat > /workspace/report.sql <<'SQL'
SELECT p.category,
       COUNT(DISTINCT o.customer_id) AS customers,
       SUM(i.quantity * i.unit_price) AS revenue
FROM order_items AS i
JOIN orders AS o ON o.id = i.order_id
JOIN products AS p ON p.id = i.product_id
WHERE o.status = 'paid'
  AND o.placed_on BETWEEN '2024-01-01' AND '2024-12-31'
GROUP BY p.category
HAVING COUNT(DISTINCT o.customer_id) >= 3
ORDER BY revenue DESC, p.category;
SQL
