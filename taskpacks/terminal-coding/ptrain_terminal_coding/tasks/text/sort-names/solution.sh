sort /workspace/names.txt > /workspace/sorted.txt
