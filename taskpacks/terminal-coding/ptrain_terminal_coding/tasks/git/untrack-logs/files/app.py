print("serving")
