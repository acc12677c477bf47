tr 'a-z' 'A-Z' < /workspace/quiet.txt > /workspace/loud.txt
