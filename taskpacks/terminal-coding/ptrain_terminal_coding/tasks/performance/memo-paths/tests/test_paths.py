import random
import subprocess

import pytest


def reference(grid):
    rows, cols = len(grid), len(grid[0])
    ways = [[0] * (cols + 1) for _ in range(rows + 1)]
    for r in range(rows - 1, -1, -1):
        for c in range(cols - 1, -1, -1):
            if grid[r][c] == "#":
                ways[r][c] = 0
            elif r == rows - 1 and c == cols - 1:
                ways[r][c] = 1
            else:
                ways[r][c] = ways[r + 1][c] + ways[r][c + 1]
    return ways[0][0]


def random_grid(seed, rows, cols, wall_rate):
    r = random.Random(seed)
    return ["".join("#" if r.random() < wall_rate and (i, j) not in ((0, 0), (rows - 1, cols - 1)) else "." for j in range(cols)) for i in range(rows)]


def run(tmp_path, grid, timeout):
    path = tmp_path / "grid.txt"
    path.write_text("\n".join(grid) + "\n")
    out = subprocess.run(["python3", "/workspace/paths.py", str(path)], capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


@pytest.mark.parametrize(
    "grid, count",
    [([".."], 1), (["."], 1), (["..", ".."], 2), (["...", "...", "..."], 6), (["#.", ".."], 0), (["..", ".#"], 0), ([".#", ".."], 1), (["...", ".#.", "..."], 2)],
)
def test_small_grids(tmp_path, grid, count):
    assert run(tmp_path, grid, 30) == count


def test_rectangular_grid(tmp_path):
    grid = random_grid(3, 4, 9, 0.1)
    assert run(tmp_path, grid, 30) == reference(grid)


def test_80_by_80_within_10_seconds(tmp_path):
    grid = random_grid(8, 80, 80, 0.05)
    assert run(tmp_path, grid, 10) == reference(grid)


def test_open_60_by_70_within_10_seconds(tmp_path):
    grid = random_grid(9, 60, 70, 0.0)
    assert run(tmp_path, grid, 10) == reference(grid)
