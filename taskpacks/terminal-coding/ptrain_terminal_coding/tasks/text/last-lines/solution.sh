tail -n 5 /workspace/server.log > /workspace/tail.txt
