cd /workspace && git bisect start main "$(git rev-list --max-parents=0 main)" >/dev/null \
 && git bisect run python3 check.py > /tmp/bisect.log 2>&1; \
cd /workspace && git rev-parse refs/bisect/bad > /workspace/first_bad.txt && git bisect reset >/dev/null 2>&1 && git checkout -q main
