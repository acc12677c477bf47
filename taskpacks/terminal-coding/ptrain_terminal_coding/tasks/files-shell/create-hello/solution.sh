printf 'Hello, world!\n' > /workspace/hello.txt
