sort -u /workspace/colors.txt > /workspace/unique.txt
