rm -f /workspace/*.log
