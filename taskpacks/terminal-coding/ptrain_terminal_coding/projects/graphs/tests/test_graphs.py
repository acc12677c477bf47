import pytest

from graphs import Graph, bfs, components, dfs, dijkstra, fewest_hops, topological_order


def undirected(*edges):
    g = Graph()
    for a, b, *w in edges:
        g.add_edge(a, b, *w)
    return g


def directed(*edges):
    g = Graph(directed=True)
    for a, b in edges:
        g.add_edge(a, b)
    return g


def square():
    return undirected(("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e"))


def test_undirected_edges_go_both_ways():
    g = undirected(("a", "b", 4))
    assert g.neighbors("a") == ["b"]
    assert g.neighbors("b") == ["a"]
    assert g.edges["b"]["a"] == 4


def test_directed_edges_go_one_way():
    g = directed(("a", "b"))
    assert g.neighbors("a") == ["b"]
    assert g.neighbors("b") == []


def test_negative_weights_are_refused():
    with pytest.raises(ValueError):
        undirected(("a", "b", -1))
    assert undirected(("a", "b", 0)).edges["a"]["b"] == 0


def test_nodes_neighbors_and_degree():
    g = square()
    g.add_node("z")
    assert g.nodes() == ["a", "b", "c", "d", "e", "z"]
    assert g.neighbors("d") == ["b", "c", "e"]
    assert g.degree("d") == 3
    assert g.degree("z") == 0
    assert g.degree("missing") == 0
    assert g.neighbors("missing") == []


def test_bfs_visits_level_by_level_in_sorted_order():
    assert bfs(square(), "a") == ["a", "b", "c", "d", "e"]
    assert bfs(square(), "e") == ["e", "d", "b", "c", "a"]


def test_bfs_visits_each_node_once():
    g = undirected((1, 2), (2, 3), (3, 1), (3, 4))
    assert bfs(g, 1) == [1, 2, 3, 4]


def test_bfs_from_an_isolated_node_is_just_that_node():
    g = square()
    g.add_node("z")
    assert bfs(g, "z") == ["z"]


def test_dfs_goes_deep_first():
    assert dfs(square(), "a") == ["a", "b", "d", "c", "e"]
    g = undirected((1, 2), (1, 3), (2, 4), (3, 5))
    assert dfs(g, 1) == [1, 2, 4, 3, 5]


def test_dfs_follows_edge_direction():
    g = directed((1, 2), (2, 3), (4, 1))
    assert dfs(g, 1) == [1, 2, 3]
    assert dfs(g, 4) == [4, 1, 2, 3]


def test_fewest_hops_finds_a_shortest_path():
    assert fewest_hops(square(), "a", "e") == ["a", "b", "d", "e"]
    assert fewest_hops(square(), "e", "a") == ["e", "d", "b", "a"]


def test_fewest_hops_from_a_node_to_itself():
    assert fewest_hops(square(), "c", "c") == ["c"]


def test_fewest_hops_without_a_path_is_none():
    g = directed(("a", "b"), ("c", "b"))
    assert fewest_hops(g, "a", "c") is None
    assert fewest_hops(g, "b", "a") is None


def test_dijkstra_prefers_light_paths_over_few_hops():
    g = undirected(("a", "b", 10), ("a", "c", 1), ("c", "d", 2), ("d", "b", 3))
    assert dijkstra(g, "a") == {"a": 0, "c": 1, "d": 3, "b": 6}


def test_dijkstra_only_reaches_reachable_nodes():
    g = directed(("a", "b"), ("c", "a"))
    assert dijkstra(g, "a") == {"a": 0, "b": 1}


def test_dijkstra_with_zero_weight_edges():
    g = undirected(("a", "b", 0), ("b", "c", 5), ("a", "c", 7))
    assert dijkstra(g, "a") == {"a": 0, "b": 0, "c": 5}


def test_dijkstra_updates_a_distance_found_earlier():
    g = directed()
    g.add_edge("s", "x", 5)
    g.add_edge("s", "y", 1)
    g.add_edge("y", "x", 1)
    g.add_edge("x", "t", 1)
    assert dijkstra(g, "s") == {"s": 0, "y": 1, "x": 2, "t": 3}


def test_components_groups_connected_nodes():
    g = undirected((1, 2), (3, 4), (4, 5))
    g.add_node(0)
    assert components(g) == [[0], [1, 2], [3, 4, 5]]


def test_a_connected_graph_has_one_component():
    assert components(square()) == [["a", "b", "c", "d", "e"]]
    assert components(Graph()) == []


def test_topological_order_puts_dependencies_first():
    g = directed(("shirt", "tie"), ("tie", "jacket"), ("pants", "shoes"), ("pants", "belt"), ("belt", "jacket"))
    assert topological_order(g) == ["pants", "belt", "shirt", "shoes", "tie", "jacket"]


def test_topological_order_breaks_ties_by_smallest_node():
    g = directed((3, 1), (2, 1))
    g.add_node(0)
    assert topological_order(g) == [0, 2, 3, 1]


def test_topological_order_waits_for_every_incoming_edge():
    g = directed(("a", "c"), ("b", "c"), ("c", "d"), ("a", "d"))
    assert topological_order(g) == ["a", "b", "c", "d"]


def test_topological_order_refuses_a_cycle():
    with pytest.raises(ValueError, match="cycle"):
        topological_order(directed((1, 2), (2, 3), (3, 1)))
