mv /workspace/notes.txt /workspace/archive/
