wc -l < /workspace/data.txt | tr -d ' ' > /workspace/count.txt
