cd /workspace && git revert --no-edit "$(git log --format=%H --grep='^Lower rate limit$' -n 1)"
