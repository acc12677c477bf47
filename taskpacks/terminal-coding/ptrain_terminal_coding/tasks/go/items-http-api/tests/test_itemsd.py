import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

ENV = {
    **os.environ,
    "GOCACHE": "/tmp/gocache-it",
    "GOPATH": "/tmp/gopath-it",
    "GOPROXY": "off",
    "GOFLAGS": "-mod=readonly",
}
PORT = 18321
BASE = f"http://127.0.0.1:{PORT}"


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    exe = tmp_path_factory.mktemp("bin") / "itemsd"
    out = subprocess.run(
        ["go", "build", "-o", str(exe), "."], cwd="/workspace", env=ENV, capture_output=True, text=True, timeout=200
    )
    assert out.returncode == 0, out.stderr
    return exe


@pytest.fixture
def server(binary):
    proc = subprocess.Popen(
        [str(binary), "-addr", f"127.0.0.1:{PORT}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.time() < deadline, "itemsd did not start"
            time.sleep(0.05)
    yield
    proc.kill()
    proc.wait()


def call(method, path, body=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(BASE + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status, headers, text = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        status, headers, text = e.code, e.headers, e.read()
    if status != 204:
        assert headers.get("Content-Type", "").startswith("application/json"), (
            method,
            path,
            status,
            headers.get("Content-Type"),
        )
    return status, headers, (json.loads(text) if text.strip() else None)


def test_create_get_delete(server):
    status, headers, item = call("POST", "/items", {"name": "lamp", "price_cents": 1999})
    assert status == 201 and item == {"id": 1, "name": "lamp", "price_cents": 1999}
    assert headers["Location"] == "/items/1"
    assert call("POST", "/items", {"name": "mug"})[2] == {"id": 2, "name": "mug", "price_cents": 0}
    assert call("GET", "/items/1")[:3:2] == (200, item)
    status, _, body = call("DELETE", "/items/1")
    assert status == 204 and body is None
    assert call("GET", "/items/1")[::2] == (404, {"error": "not found"})
    assert call("DELETE", "/items/1")[::2] == (404, {"error": "not found"})
    assert call("POST", "/items", {"name": "desk"})[2]["id"] == 3


def test_bad_requests(server):
    assert call("GET", "/items/abc")[::2] == (400, {"error": "bad id"})
    for raw in (b"not json", b'{"name": ""}', b"{}", b'{"name": "x", "price_cents": -5}', b'{"name": 5}'):
        status, _, body = call("POST", "/items", raw=raw)
        assert status == 400 and isinstance(body.get("error"), str) and body["error"], raw
    assert call("GET", "/items")[::2] == (200, [])
    assert call("PUT", "/items/1", {"name": "x"})[0] == 405
    assert call("DELETE", "/items")[0] == 405


def test_pagination(server):
    for i in range(1, 8):
        call("POST", "/items", {"name": f"n{i}", "price_cents": i})
    call("DELETE", "/items/3")
    ids = lambda q: [it["id"] for it in call("GET", "/items" + q)[2]]  # noqa: E731
    assert ids("") == [1, 2, 4, 5, 6, 7]
    assert ids("?limit=2&offset=1") == [2, 4]
    assert ids("?offset=4") == [6, 7]
    assert ids("?limit=0") == []
    assert ids("?offset=50") == []
    for q in ("?limit=-1", "?limit=x", "?offset=-2"):
        assert call("GET", "/items" + q)[0] == 400, q


def test_limit_default_and_maximum(server):
    for i in range(120):
        call("POST", "/items", {"name": f"bulk{i}"})
    assert len(call("GET", "/items")[2]) == 50
    assert len(call("GET", "/items?limit=500")[2]) == 100


def test_concurrent_creates_get_unique_ids(server):
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda i: call("POST", "/items", {"name": f"c{i}"}), range(400)))
    ids = [r[2]["id"] for r in results]
    assert all(r[0] == 201 for r in results)
    assert sorted(ids) == list(range(1, 401))
