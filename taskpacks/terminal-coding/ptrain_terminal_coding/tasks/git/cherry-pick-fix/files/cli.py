import sys

from units import parse_size

print(parse_size(sys.argv[1]))
