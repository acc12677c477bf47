cd /workspace && git checkout -q -b docs/usage main && echo 'Run ./app.sh --help for options.' > USAGE.md && git add USAGE.md && git commit -qm 'Add usage notes'
