cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("paths.py")
src = p.read_text()
start = src.index("def count_paths(grid, row, col):")
end = src.index("def main(path):")
fast = '''def count_paths(grid, row, col):
    rows, cols = len(grid), len(grid[0])
    below = [0] * (cols + 1)
    for r in range(rows - 1, row - 1, -1):
        here = [0] * (cols + 1)
        for c in range(cols - 1, col - 1, -1):
            if grid[r][c] == "#":
                here[c] = 0
            elif r == rows - 1 and c == cols - 1:
                here[c] = 1
            else:
                here[c] = below[c] + here[c + 1]
        below = here
    return below[col]


'''
p.write_text(src[:start] + fast + src[end:])
PY
