tail -n +2 /workspace/orders.csv | wc -l > /workspace/rows.txt
