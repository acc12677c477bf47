"""Geometry of triangle meshes as numpy arrays: surface sampling, point-to-surface distances,
rigid alignment and text projections.

Pure numpy, so the same file runs on the host (tests) and inside the sandbox (shipped in the image
next to `cadtool.py`). A mesh is `(vertices (V, 3) float, faces (F, 3) int)`; distances are in mm.

Alignment is for parts whose description fixes no origin or orientation: both point clouds are
centred and turned onto their principal axes, every one of the 24 proper axis flips/permutations is
tried (principal axes have no sign and ties swap them), the best few are refined with ICP, and the
caller keeps whatever gives the better overlap, the part as placed included.
"""

from __future__ import annotations

import itertools

import numpy as np

CHUNK = 256  # points per block in brute-force queries


def read_stl(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """An STL file (binary or ASCII) as a mesh, identical vertices merged."""
    n = int.from_bytes(data[80:84], "little") if len(data) >= 84 else -1
    if len(data) == 84 + 50 * n:
        record = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attr", "<u2")])
        corners = np.frombuffer(data, dtype=record, count=n, offset=84)["corners"].reshape(-1, 3)
    elif data.lstrip()[:5].lower() == b"solid":
        words = data.split()
        at = [i for i, w in enumerate(words) if w == b"vertex"]
        corners = np.array([[float(words[i + k]) for k in (1, 2, 3)] for i in at]).reshape(-1, 3)
    else:
        raise ValueError("not an STL file")
    vertices, inverse = np.unique(corners.astype(np.float64), axis=0, return_inverse=True)
    return vertices, inverse.reshape(-1, 3)


def bbox(vertices: np.ndarray) -> tuple[list[float], list[float]]:
    return vertices.min(axis=0).tolist(), vertices.max(axis=0).tolist()


def triangle_areas(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    return 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)


def sample_surface(vertices: np.ndarray, faces: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """`n` points spread over the surface by area (the same points for the same mesh and seed)."""
    rng = np.random.default_rng(seed)
    areas = triangle_areas(vertices, faces)
    chosen = rng.choice(len(faces), size=n, p=areas / areas.sum())
    u, v = rng.random((2, n))
    flip = u + v > 1
    u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
    a, b, c = (vertices[faces[chosen, i]] for i in range(3))
    return a + u[:, None] * (b - a) + v[:, None] * (c - a)


def _dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", x, y)


def closest_on_triangles(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """For each row, the point of triangle (a, b, c) nearest to p (Ericson, Real-Time Collision Detection 5.1.5)."""
    ab, ac, ap, bp, cp = b - a, c - a, p - a, p - b, p - c
    d1, d2, d3, d4, d5, d6 = _dot(ab, ap), _dot(ac, ap), _dot(ab, bp), _dot(ac, bp), _dot(ab, cp), _dot(ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2

    def safe(x):
        return np.where(np.abs(x) > 1e-30, x, 1e-30)

    with np.errstate(divide="ignore", invalid="ignore"):
        s = safe(va + vb + vc)
        out = a + ab * (vb / s)[:, None] + ac * (vc / s)[:, None]  # inside the face
        rules = [  # later rules win, so they are listed from the last region to the first
            ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), b + (c - b) * ((d4 - d3) / safe(d4 - d3 + d5 - d6))[:, None]),
            ((vb <= 0) & (d2 >= 0) & (d6 <= 0), a + ac * (d2 / safe(d2 - d6))[:, None]),
            ((d6 >= 0) & (d5 <= d6), c),
            ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + ab * (d1 / safe(d1 - d3))[:, None]),
            ((d3 >= 0) & (d4 <= d3), b),
            ((d1 <= 0) & (d2 <= 0), a),
        ]
        for mask, point in rules:
            out = np.where(mask[:, None], point, out)
    return out


def closest_points(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nearest point of the mesh surface to each point, and its distance (exact; bounding
    spheres prune the triangles tried)."""
    tri = vertices[faces]
    centres = tri.mean(axis=1)
    radii = np.linalg.norm(tri - centres[:, None], axis=2).max(axis=1)
    closest, dist = np.empty_like(points), np.empty(len(points))
    chunk = max(1, min(CHUNK, 2_000_000 // len(faces)))  # bounded memory on finely tessellated parts
    for start in range(0, len(points), chunk):
        block = points[start : start + chunk]
        to_centre = np.linalg.norm(block[:, None, :] - centres[None], axis=2)
        upper = (to_centre + radii).min(axis=1)
        rows, cols = np.nonzero(to_centre - radii <= upper[:, None])
        candidates = closest_on_triangles(block[rows], tri[cols, 0], tri[cols, 1], tri[cols, 2])
        d = np.linalg.norm(block[rows] - candidates, axis=1)
        order = np.lexsort((d, rows))  # by row, nearest first
        first = order[np.r_[True, rows[order][1:] != rows[order][:-1]]]
        closest[start + rows[first]] = candidates[first]
        dist[start + rows[first]] = d[first]
    return closest, dist


def surface_distances(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    return closest_points(points, vertices, faces)[1]


def surface_metrics(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], n: int = 2000) -> dict:
    """Chamfer distance (mean of both directions' mean point-to-surface distance) and Hausdorff
    distances (95th percentile and max, the worse direction) between two meshes' surfaces."""
    a_to_b = surface_distances(sample_surface(*a, n, seed=1), *b)
    b_to_a = surface_distances(sample_surface(*b, n, seed=2), *a)
    return {
        "chamfer_mm": float((a_to_b.mean() + b_to_a.mean()) / 2),
        "hausdorff95_mm": float(max(np.percentile(a_to_b, 95), np.percentile(b_to_a, 95))),
        "hausdorff_max_mm": float(max(a_to_b.max(), b_to_a.max())),
    }


def nearest(points: np.ndarray, cloud: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of and distance to the nearest `cloud` point, for each point (brute force, in blocks)."""
    index = np.empty(len(points), dtype=int)
    dist = np.empty(len(points))
    cloud_sq = (cloud**2).sum(axis=1)
    for start in range(0, len(points), 4 * CHUNK):
        block = points[start : start + 4 * CHUNK]
        d2 = (block**2).sum(axis=1)[:, None] + cloud_sq[None] - 2 * block @ cloud.T  # |a-b|² by one matmul
        index[start : start + len(block)] = d2.argmin(axis=1)
        dist[start : start + len(block)] = np.sqrt(np.maximum(d2.min(axis=1), 0))
    return index, dist


def kabsch(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rotation R and translation t (no reflection) that best map src onto dst: dst ≈ src @ R.T + t."""
    cs, cd = src.mean(axis=0), dst.mean(axis=0)
    u, _, vt = np.linalg.svd((src - cs).T @ (dst - cd))
    d = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    r = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    return r, cd - r @ cs


def principal_frame(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centroid and principal axes (rows, largest spread first, right-handed)."""
    centre = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - centre, full_matrices=False)
    if np.linalg.det(vt) < 0:
        vt[2] = -vt[2]
    return centre, vt


def proper_rotations() -> list[np.ndarray]:
    """The 24 rotations that map the coordinate axes onto themselves (signed permutations, det +1)."""
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = np.zeros((3, 3))
            m[range(3), perm] = signs
            if np.linalg.det(m) > 0:
                out.append(m)
    return out


def icp(moving: np.ndarray, fixed: np.ndarray, r: np.ndarray, t: np.ndarray, iterations: int = 20):
    """Point-to-point ICP from (r, t); returns the refined (r, t) and the mean nearest distance."""
    error = np.inf
    for _ in range(iterations):
        index, dist = nearest(moving @ r.T + t, fixed)
        if error - dist.mean() < 1e-6:
            break
        error = dist.mean()
        r, t = kabsch(moving, fixed[index])
    _, dist = nearest(moving @ r.T + t, fixed)
    return r, t, float(dist.mean())


def refine(moving: np.ndarray, mesh: tuple[np.ndarray, np.ndarray], r: np.ndarray, t: np.ndarray, iterations: int = 15):
    """ICP against the mesh surface itself (exact closest points), which sampling noise can't blur."""
    error = np.inf
    for _ in range(iterations):
        target, dist = closest_points(moving @ r.T + t, *mesh)
        if error - dist.mean() < 1e-5:
            break
        error = dist.mean()
        r, t = kabsch(moving, target)
    return r, t, float(closest_points(moving @ r.T + t, *mesh)[1].mean())


def align(
    moving: np.ndarray, fixed: np.ndarray, mesh: tuple[np.ndarray, np.ndarray] | None = None, keep: int = 3
) -> tuple[np.ndarray, np.ndarray, float]:
    """A rigid transform (r, t) taking the `moving` points onto the `fixed` ones, and its mean
    nearest-point distance: principal frames, all 24 axis flips, the `keep` best refined by ICP,
    then the best refined against the fixed `mesh` surface where one is given."""
    cm, am = principal_frame(moving)
    cf, af = principal_frame(fixed)
    probe = moving[:: max(1, len(moving) // 300)]
    candidates = []
    for flip in proper_rotations():
        r = af.T @ flip @ am
        t = cf - r @ cm
        candidates.append((nearest(probe @ r.T + t, fixed)[1].mean(), r, t))
    candidates.sort(key=lambda c: c[0])
    few, target = moving[:: max(1, len(moving) // 300)], fixed[:: max(1, len(fixed) // 1000)]
    r, t, error = min((icp(few, target, r, t) for _, r, t in candidates[:keep]), key=lambda x: x[2])
    return refine(few, mesh, r, t) if mesh is not None else (r, t, error)


def height_map(vertices: np.ndarray, faces: np.ndarray, view: str, cell_mm: float) -> tuple[np.ndarray, dict]:
    """What a viewer sees along one axis: for each cell of a grid, the nearest surface's depth
    (NaN where nothing is). Views: top (from +Z: X right, Y up), front (from -Y: X right, Z up),
    side (from +X: Y right, Z up)."""
    u_axis, v_axis, d_axis, sign = {"top": (0, 1, 2, 1), "front": (0, 2, 1, -1), "side": (1, 2, 0, 1)}[view]
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    cols = max(1, int(np.ceil((hi[u_axis] - lo[u_axis]) / cell_mm - 1e-9)))
    rows = max(1, int(np.ceil((hi[v_axis] - lo[v_axis]) / cell_mm - 1e-9)))
    grid = np.full((rows, cols), -np.inf)
    uv = (vertices[:, [u_axis, v_axis]] - lo[[u_axis, v_axis]]) / cell_mm - 0.5  # cell centres at integers
    depth = sign * vertices[:, d_axis]
    for f in faces:
        (x0, y0), (x1, y1), (x2, y2) = uv[f]
        det = (y1 - y2) * (x0 - x2) + (x2 - x1) * (y0 - y2)
        if abs(det) < 1e-12:
            continue  # seen edge-on
        i0, i1 = max(0, int(np.ceil(min(x0, x1, x2)))), min(cols - 1, int(np.floor(max(x0, x1, x2))))
        j0, j1 = max(0, int(np.ceil(min(y0, y1, y2)))), min(rows - 1, int(np.floor(max(y0, y1, y2))))
        if i0 > i1 or j0 > j1:
            continue
        gx, gy = np.meshgrid(np.arange(i0, i1 + 1), np.arange(j0, j1 + 1))
        w0 = ((y1 - y2) * (gx - x2) + (x2 - x1) * (gy - y2)) / det
        w1 = ((y2 - y0) * (gx - x2) + (x0 - x2) * (gy - y2)) / det
        w2 = 1 - w0 - w1
        inside = (w0 >= -1e-9) & (w1 >= -1e-9) & (w2 >= -1e-9)
        d = w0 * depth[f[0]] + w1 * depth[f[1]] + w2 * depth[f[2]]
        block = grid[j0 : j1 + 1, i0 : i1 + 1]
        block[inside] = np.maximum(block[inside], d[inside])
    grid[np.isinf(grid)] = np.nan
    names = "XYZ"
    ends = sorted((sign * lo[d_axis], sign * hi[d_axis]))
    info = {"right": names[u_axis], "up": names[v_axis], "depth_axis": names[d_axis], "sign": sign,
            "origin": (float(lo[u_axis]), float(lo[v_axis])), "cols": cols, "rows": rows,
            "far": float(ends[0]), "near": float(ends[1])}  # fmt: skip
    return grid[::-1], info  # row 0 at the top


def draw(grid: np.ndarray, near: float, far: float, levels: int = 10) -> list[str]:
    """A height map as lines of digits: 9 at the part's end nearest the viewer, 0 at its far end,
    space where there is nothing."""
    span = max(near - far, 1e-9)
    lines = []
    for row in grid:
        chars = [" " if np.isnan(d) else str(int(np.clip(round((d - far) / span * (levels - 1)), 0, 9))) for d in row]
        lines.append("".join(chars).rstrip())
    return lines
