gcc -o /workspace/hello /workspace/hello.c
