cd /workspace/data && find . -type f -size +10240c | sed 's|^\./||' | LC_ALL=C sort > /workspace/large.txt
