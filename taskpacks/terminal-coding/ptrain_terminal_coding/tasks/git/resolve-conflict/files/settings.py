HOST = "localhost"
PORT = 8000
DEBUG = False
