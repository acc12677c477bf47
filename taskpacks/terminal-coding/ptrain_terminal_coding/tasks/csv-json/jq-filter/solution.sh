jq '[.[] | select(.active and .age > 30) | .name]' /workspace/users.json > /workspace/result.json
