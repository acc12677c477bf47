awk '{ total[$1] += $2 } END { for (r in total) print r, total[r] }' /workspace/sales.txt | sort > /workspace/totals.txt
