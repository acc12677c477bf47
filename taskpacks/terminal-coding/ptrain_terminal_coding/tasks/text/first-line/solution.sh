head -n 1 /workspace/poem.txt > /workspace/first.txt
