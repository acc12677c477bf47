cd /workspace && git init -q && git add -A && git commit -qm 'initial commit'
