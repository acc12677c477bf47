git -C /workspace branch feature/login
