cd /workspace && git checkout -q main && git cherry-pick "$(git log --format=%H --grep='^Support G suffix in parse_size$' -n 1 experimental)"
