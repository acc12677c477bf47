"""The CAD sandbox's geometry (pure numpy, run here on the host): distances, alignment, projections."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ptrain_cad.measure import geometry

FIXTURES = Path(__file__).parents[1] / "taskpacks" / "cad" / "ptrain_cad" / "fixtures"


def mesh(name: str):
    return geometry.read_stl((FIXTURES / f"{name}.stl").read_bytes())


def rotation(axis, degrees: float) -> np.ndarray:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    a = np.radians(degrees)
    return np.eye(3) + np.sin(a) * k + (1 - np.cos(a)) * k @ k


def test_binary_and_ascii_stl_read_to_the_same_closed_mesh():
    vertices, faces = mesh("flanged-bushing")
    ascii_stl = "solid x\n" + "".join(
        "facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in vertices[f]) + "endloop\nendfacet\n"
        for f in faces
    ) + "endsolid x\n"  # fmt: skip
    v2, f2 = geometry.read_stl(ascii_stl.encode())
    assert np.allclose(np.sort(v2, axis=0), np.sort(vertices, axis=0), atol=1e-4) and len(f2) == len(faces)
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    assert set(np.unique(edges, axis=0, return_counts=True)[1]) == {2}  # every edge shared by two faces


def test_point_to_triangle_distance_agrees_with_dense_sampling():
    rng = np.random.default_rng(0)
    a, b, c = np.array([0.0, 0, 0]), np.array([4.0, 0, 0]), np.array([1.0, 3, 0])
    u, v = rng.random((2, 20000))
    keep = u + v <= 1
    dense = a + u[keep, None] * (b - a) + v[keep, None] * (c - a)
    points = rng.uniform(-3, 6, (200, 3))
    n = len(points)
    exact = np.linalg.norm(
        points - geometry.closest_on_triangles(points, *(np.tile(p, (n, 1)) for p in (a, b, c))), axis=1
    )
    approx = geometry.nearest(points, dense)[1]
    assert np.all(exact <= approx + 1e-9) and np.allclose(exact, approx, atol=0.05)


def test_surface_metrics_are_zero_for_the_same_mesh_and_see_a_half_millimetre_shift():
    vertices, faces = mesh("corner-bracket")
    same = geometry.surface_metrics((vertices, faces), (vertices, faces), n=500)
    assert same["chamfer_mm"] < 1e-9 and same["hausdorff95_mm"] < 1e-9
    shifted = geometry.surface_metrics((vertices + [0.5, 0, 0], faces), (vertices, faces), n=500)
    assert 0.05 < shifted["chamfer_mm"] < 0.5 and shifted["hausdorff95_mm"] == pytest.approx(0.5, abs=0.01)


def test_there_are_24_proper_axis_rotations():
    rotations = geometry.proper_rotations()
    assert len({r.tobytes() for r in rotations}) == 24
    assert all(np.isclose(np.linalg.det(r), 1) and np.allclose(r @ r.T, np.eye(3)) for r in rotations)


@pytest.mark.parametrize(
    "name, axis, degrees",
    [("corner-bracket", (1, 2, 3), 37), ("flanged-bushing", (1, 1, 0), 180), ("dowel-pair", (0, 0, 1), 90)],
)
def test_alignment_brings_a_turned_and_moved_part_back_onto_the_reference(name, axis, degrees):
    vertices, faces = mesh(name)
    moved = vertices @ rotation(axis, degrees).T + [120.0, -40.0, 7.0]
    moving = geometry.sample_surface(moved, faces, 1500, seed=3)
    fixed = geometry.sample_surface(vertices, faces, 1500, seed=4)
    r, t, _ = geometry.align(moving, fixed, (vertices, faces))
    back = moved @ r.T + t
    metrics = geometry.surface_metrics((back, faces), (vertices, faces), n=500)
    assert metrics["hausdorff95_mm"] < 0.2, metrics


def test_the_top_view_shows_the_bore_as_empty_and_the_flange_lower_than_the_barrel():
    vertices, faces = mesh("flanged-bushing")  # Ø36 flange 4 thick, Ø20 barrel to Z 30, Ø12 bore
    grid, info = geometry.height_map(vertices, faces, "top", 2.0)
    lines = geometry.draw(grid, info["near"], info["far"])
    assert (info["cols"], info["rows"]) == (18, 18) and (info["near"], info["far"]) == pytest.approx((30, 0))
    middle = lines[9]
    assert middle[8:10] == "  " and middle[5] == "9" and middle[0] == "1"  # flange top at Z 4 of 30
    front, info = geometry.height_map(vertices, faces, "front", 2.0)
    assert np.isnan(front[0, 0]) and not np.isnan(front[0, 9])  # the barrel rises above the flange's corners
