grep ERROR /workspace/app.log > /workspace/errors.txt
