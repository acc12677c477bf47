"""Scripts that run inside the CAD sandbox (shipped to /opt/ptrain-cad/); geometry.py is also imported on the host."""
