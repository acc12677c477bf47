"""Count the paths through a grid.

Usage: python3 paths.py GRID_FILE

The grid file has one row per line; `.` is an open cell and `#` a wall. A path starts in the
top-left cell, ends in the bottom-right cell, moves only right or down, and never enters a wall.
Prints the number of such paths (0 if the start or the end is a wall).
"""

import sys


def count_paths(grid, row, col):
    rows, cols = len(grid), len(grid[0])
    if row >= rows or col >= cols or grid[row][col] == "#":
        return 0
    if row == rows - 1 and col == cols - 1:
        return 1
    return count_paths(grid, row + 1, col) + count_paths(grid, row, col + 1)


def main(path):
    with open(path) as f:
        grid = [line.rstrip("\n") for line in f if line.strip()]
    print(count_paths(grid, 0, 0))


if __name__ == "__main__":
    main(sys.argv[1])
