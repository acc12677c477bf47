"""Graph search on a small weighted graph: BFS, DFS, shortest paths, components, topological order."""

import heapq
from collections import deque


class Graph:
    def __init__(self, directed=False):
        self.directed = directed
        self.edges = {}

    def add_node(self, node):
        self.edges.setdefault(node, {})

    def add_edge(self, a, b, weight=1):
        if weight < 0:
            raise ValueError("weights must not be negative")
        self.add_node(a)
        self.add_node(b)
        self.edges[a][b] = weight
        if not self.directed:
            self.edges[b][a] = weight

    def neighbors(self, node):
        return sorted(self.edges.get(node, {}))

    def nodes(self):
        return sorted(self.edges)

    def degree(self, node):
        return len(self.edges.get(node, {}))


def bfs(graph, start):
    """Nodes in breadth-first order from `start`, neighbors visited in sorted order."""
    seen = {start}
    order = []
    queue = deque([start])
    while queue:
        node = queue.popleft()
        order.append(node)
        for nxt in graph.neighbors(node):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return order


def dfs(graph, start, seen=None):
    """Nodes in depth-first (pre-)order from `start`."""
    if seen is None:
        seen = set()
    seen.add(start)
    order = [start]
    for nxt in graph.neighbors(start):
        if nxt not in seen:
            order.extend(dfs(graph, nxt, seen))
    return order


def fewest_hops(graph, start, goal):
    """A path with the fewest edges from start to goal, or None."""
    parents = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = []
            while node is not None:
                path.append(node)
                node = parents[node]
            return path[::-1]
        for nxt in graph.neighbors(node):
            if nxt not in parents:
                parents[nxt] = node
                queue.append(nxt)
    return None


def dijkstra(graph, start):
    """Shortest distances from start to every reachable node."""
    dist = {start: 0}
    heap = [(0, start)]
    while heap:
        d, node = heapq.heappop(heap)
        if d > dist[node]:
            continue
        for nxt in graph.neighbors(node):
            candidate = d + graph.edges[node][nxt]
            if nxt not in dist or candidate < dist[nxt]:
                dist[nxt] = candidate
                heapq.heappush(heap, (candidate, nxt))
    return dist


def components(graph):
    """Connected components (of an undirected graph), each sorted, smallest node first."""
    seen = set()
    result = []
    for node in graph.nodes():
        if node not in seen:
            part = bfs(graph, node)
            seen.update(part)
            result.append(sorted(part))
    return result


def topological_order(graph):
    """Kahn's algorithm; among ready nodes the smallest goes first. Raises on a cycle."""
    indegree = {node: 0 for node in graph.nodes()}
    for node in graph.nodes():
        for nxt in graph.neighbors(node):
            indegree[nxt] += 1
    ready = [node for node, count in indegree.items() if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for nxt in graph.neighbors(node):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                heapq.heappush(ready, nxt)
    if len(order) != len(indegree):
        raise ValueError("the graph has a cycle")
    return order
