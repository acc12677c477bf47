touch /workspace/READY
