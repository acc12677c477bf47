mv /workspace/draft.txt /workspace/final.txt
