from util import add

print(add(1, 2))
