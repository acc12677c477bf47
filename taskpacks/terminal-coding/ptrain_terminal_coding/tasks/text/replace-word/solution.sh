sed -i 's/Bob/Robert/g' /workspace/letter.txt
