import http.client
import json
import os
import socket
import subprocess
import time

import pytest

PORT = 18777


@pytest.fixture
def server():
    proc = subprocess.Popen(["node", "server.js"], cwd="/workspace", env={**os.environ, "PORT": str(PORT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.time() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.time() < deadline, "server did not start"
            time.sleep(0.05)
    yield proc
    proc.kill()
    proc.wait()


def call(method, path, body=None, raw=None):
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    data = raw if raw is not None else (json.dumps(body) if body is not None else None)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data is not None else {})
    resp = conn.getresponse()
    text = resp.read()
    headers = {k.lower(): v for k, v in resp.getheaders()}
    if resp.status != 204:
        assert headers.get("content-type", "").startswith("application/json"), (method, path, headers)
    return resp.status, headers, (json.loads(text) if text else None)


def seed():
    call("POST", "/bookmarks", {"url": "https://nodejs.org", "tags": ["js", "node"]})
    call("POST", "/bookmarks", {"url": "https://isocpp.org", "tags": ["c++"]})
    call("POST", "/bookmarks", {"url": "https://example.com"})


def test_crud(server):
    status, _, b = call("POST", "/bookmarks", {"url": "https://a.test", "tags": ["x"]})
    assert status == 201 and b == {"id": 1, "url": "https://a.test", "tags": ["x"]}
    assert call("GET", "/bookmarks/1")[2] == b
    assert call("DELETE", "/bookmarks/1")[0] == 204
    assert call("GET", "/bookmarks/1")[::2] == (404, {"error": "not found"})
    assert call("POST", "/bookmarks", {"url": "https://b.test"})[2] == {"id": 2, "url": "https://b.test", "tags": []}


def test_query_strings_and_trailing_slashes(server):
    seed()
    assert [b["id"] for b in call("GET", "/bookmarks?tag=js")[2]] == [1]
    assert [b["id"] for b in call("GET", "/bookmarks/")[2]] == [1, 2, 3]
    assert [b["id"] for b in call("GET", "/bookmarks?x=1")[2]] == [1, 2, 3]
    assert call("GET", "/bookmarks/2/")[2]["url"] == "https://isocpp.org"


def test_parameters_are_decoded(server):
    seed()
    assert [b["id"] for b in call("GET", "/tags/c%2B%2B")[2]] == [2]
    assert call("GET", "/tags/nothing")[::2] == (200, [])


def test_bad_bodies_do_not_kill_the_server(server):
    assert call("POST", "/bookmarks", raw="{not json")[::2] == (400, {"error": "invalid JSON"})
    for body in ({}, {"url": ""}, {"url": 5}, {"url": "https://x", "tags": "js"}, {"url": "https://x", "tags": [1]}):
        status, _, got = call("POST", "/bookmarks", body)
        assert status == 400 and got["error"], body
    assert server.poll() is None
    assert call("GET", "/bookmarks")[::2] == (200, [])


def test_405_with_allow_and_404(server):
    status, headers, _ = call("DELETE", "/bookmarks")
    assert status == 405
    assert sorted(m.strip() for m in headers["allow"].split(",")) == ["GET", "POST"]
    status, headers, _ = call("PUT", "/bookmarks/1")
    assert status == 405 and sorted(m.strip() for m in headers["allow"].split(",")) == ["DELETE", "GET"]
    assert call("GET", "/nope")[::2] == (404, {"error": "not found"})
