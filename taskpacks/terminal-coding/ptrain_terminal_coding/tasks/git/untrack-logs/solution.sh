cd /workspace && git rm -q --cached debug.log logs/server.log && echo '*.log' > .gitignore && git add .gitignore && git commit -qm 'Stop tracking log files'
