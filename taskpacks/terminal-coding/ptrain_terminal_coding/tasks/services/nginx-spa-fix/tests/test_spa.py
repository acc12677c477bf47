import http.client
import json
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CONF = Path("/workspace/deploy/nginx.conf")
INDEX = b'data-app="dashboard"'


class Backend(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"backend": True, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    backend = ThreadingHTTPServer(("127.0.0.1", 9200), Backend)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    proc = subprocess.Popen(["nginx", "-p", "/workspace/deploy/", "-c", str(CONF), "-e", "/tmp/nginx-startup.log", "-g", "daemon off;"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.time() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", 8090), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                raise AssertionError("nginx did not start: " + proc.stdout.read().decode()[-2000:]) from None
            time.sleep(0.1)
    yield
    proc.terminate()
    proc.wait(timeout=10)
    backend.shutdown()


def get(path):
    conn = http.client.HTTPConnection("127.0.0.1", 8090, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()


def test_root_and_existing_files(server):
    status, headers, body = get("/")
    assert status == 200 and INDEX in body and headers.get("cache-control") == "no-cache"
    status, _, body = get("/robots.txt")
    assert status == 200 and body == b"User-agent: *\n"


def test_client_side_routes_get_the_app(server):
    for path in ("/settings/profile", "/reports", "/users/42/edit?tab=2"):
        status, headers, body = get(path)
        assert status == 200 and INDEX in body, path
        assert headers.get("cache-control") == "no-cache", path


def test_missing_files_with_extensions_are_404(server):
    for path in ("/assets/missing.js", "/favicon.ico", "/reports/q3.pdf"):
        status, _, body = get(path)
        assert status == 404 and INDEX not in body, path


def test_assets_are_immutable(server):
    status, headers, body = get("/assets/main.3f9a1c.js")
    assert status == 200 and body == b'console.log("dashboard main");\n'
    assert headers.get("cache-control") == "public, max-age=31536000, immutable"
    assert headers["content-type"].split(";")[0] in ("application/javascript", "text/javascript")


def test_api_goes_to_the_backend(server):
    status, _, body = get("/api/health?x=1")
    assert status == 200 and json.loads(body) == {"backend": True, "path": "/api/health?x=1"}
    status, _, body = get("/api/reports/q3.json")
    assert status == 200 and json.loads(body) == {"backend": True, "path": "/api/reports/q3.json"}
