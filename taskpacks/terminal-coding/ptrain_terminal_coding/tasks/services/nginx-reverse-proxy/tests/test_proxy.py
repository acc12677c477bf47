"""The tests run their own backend on 9100 (an echo server), so they see what nginx forwarded."""

import gzip
import http.client
import json
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CONF = Path("/workspace/nginx/nginx.conf")


class Echo(BaseHTTPRequestHandler):
    def reply(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        payload = json.dumps({"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                              "body": body.decode("latin-1")}).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = reply

    def log_message(self, *args):
        pass


def wait_port(port, proc, seconds=15):
    deadline = time.time() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                log = Path("/tmp/nginx-startup.log")
                raise AssertionError(
                    "nginx did not start: "
                    + proc.stdout.read().decode()[-2000:]
                    + (log.read_text()[-2000:] if log.exists() else "")
                ) from None
            time.sleep(0.1)


@pytest.fixture(scope="module")
def backend():
    server = ThreadingHTTPServer(("127.0.0.1", 9100), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def nginx(backend):
    assert CONF.is_file(), "no /workspace/nginx/nginx.conf"
    proc = subprocess.Popen(["nginx", "-p", "/workspace/nginx/", "-c", str(CONF), "-e", "/tmp/nginx-startup.log", "-g", "daemon off;"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    wait_port(8081, proc)
    yield proc
    proc.terminate()
    proc.wait(timeout=10)


def request(method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", 8081, timeout=15)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()


def test_api_prefix_is_stripped_and_query_kept(nginx):
    status, _, body = request("GET", "/api/items?limit=2&sort=name")
    assert status == 200
    seen = json.loads(body)
    assert seen["method"] == "GET" and seen["path"] == "/items?limit=2&sort=name"


def test_post_bodies_and_methods_pass_through(nginx):
    status, _, body = request("POST", "/api/items", body=b'{"name": "x"}', headers={"Content-Type": "application/json"})
    seen = json.loads(body)
    assert status == 200 and seen["method"] == "POST" and seen["path"] == "/items" and seen["body"] == '{"name": "x"}'
    status, _, body = request("DELETE", "/api/items/3")
    assert json.loads(body)["method"] == "DELETE" and json.loads(body)["path"] == "/items/3"


def test_forwarded_headers(nginx):
    _, _, body = request("GET", "/api/whoami", headers={"Host": "shop.example.com"})
    headers = json.loads(body)["headers"]
    assert headers["host"] == "shop.example.com"
    assert headers["x-real-ip"] == "127.0.0.1"
    assert headers["x-forwarded-proto"] == "http"


def test_body_size_limit(nginx):
    status, _, _ = request("POST", "/api/upload", body=b"x" * (1024 * 1024))
    assert status == 200
    status, _, _ = request("POST", "/api/upload", body=b"x" * (1024 * 1024 + 1))
    assert status == 413


def test_static_files_with_gzip(nginx):
    for name in ("app.js", "app.css"):
        want = Path("/workspace/app/static", name).read_bytes()
        status, headers, body = request("GET", "/static/" + name, headers={"Accept-Encoding": "gzip"})
        assert status == 200 and headers.get("content-encoding") == "gzip", headers
        assert gzip.decompress(body) == want
        status, headers, body = request("GET", "/static/" + name)
        assert status == 200 and "content-encoding" not in headers and body == want


def test_api_down_gives_json_503(nginx, backend):
    backend.shutdown()
    backend.server_close()
    time.sleep(0.2)
    status, headers, body = request("GET", "/api/items")
    assert status == 503
    assert headers["content-type"].split(";")[0] == "application/json"
    assert json.loads(body) == {"error": "api unavailable"}
