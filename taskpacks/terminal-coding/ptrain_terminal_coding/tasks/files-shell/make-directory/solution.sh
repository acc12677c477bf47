mkdir -p /workspace/build/output
