awk '{print $1}' /workspace/access.log | sort | uniq -c | sort -rn | head -n 3 | awk '{print $1, $2}' > /workspace/top.txt
