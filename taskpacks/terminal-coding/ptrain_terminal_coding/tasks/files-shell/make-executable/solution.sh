chmod +x /workspace/run.py
