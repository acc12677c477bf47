echo 'print("Hello from Python")' > /workspace/hello.py
