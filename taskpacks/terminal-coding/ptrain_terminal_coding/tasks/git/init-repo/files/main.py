from lib.util import double

print(double(21))
