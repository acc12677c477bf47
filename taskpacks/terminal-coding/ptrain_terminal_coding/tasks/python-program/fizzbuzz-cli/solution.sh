cat > /workspace/fizzbuzz.py <<'PY'
import sys


def main(argv):
    if len(argv) != 2 or not argv[1].isdigit() or int(argv[1]) < 1:
        print("usage: fizzbuzz.py N  (N a positive integer)", file=sys.stderr)
        return 2
    for i in range(1, int(argv[1]) + 1):
        print("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else i)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
