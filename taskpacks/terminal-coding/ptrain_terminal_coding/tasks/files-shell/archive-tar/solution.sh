cd /workspace && tar --exclude='*.pyc' -czf project.tar.gz project
