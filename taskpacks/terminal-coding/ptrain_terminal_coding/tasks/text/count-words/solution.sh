wc -w < /workspace/essay.txt | tr -d " " > /workspace/words.txt
