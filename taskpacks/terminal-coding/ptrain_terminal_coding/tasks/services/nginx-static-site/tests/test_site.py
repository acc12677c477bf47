import http.client
import secrets
import socket
import subprocess
import time
from pathlib import Path

import pytest

PUBLIC = Path("/workspace/site/public")
CONF = Path("/workspace/nginx/nginx.conf")


@pytest.fixture(scope="module")
def server():
    assert CONF.is_file(), "no /workspace/nginx/nginx.conf"
    proc = subprocess.Popen(["nginx", "-p", "/workspace/nginx/", "-c", str(CONF), "-e", "/tmp/nginx-startup.log", "-g", "daemon off;"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.time() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", 8080), timeout=1).close()
            break
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
    yield
    proc.terminate()
    proc.wait(timeout=10)


def get(path):
    conn = http.client.HTTPConnection("127.0.0.1", 8080, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()


def test_index_pages(server):
    status, _, body = get("/")
    assert status == 200 and b"Welcome to Acme" in body
    status, _, body = get("/docs/")
    assert status == 200 and b"Acme documentation" in body


def test_files_come_from_the_document_root(server):
    name = f"probe-{secrets.token_hex(6)}.txt"
    content = secrets.token_hex(16).encode()
    (PUBLIC / name).write_bytes(content)
    try:
        status, _, body = get("/" + name)
        assert status == 200 and body == content
    finally:
        (PUBLIC / name).unlink()


def test_missing_pages_get_the_custom_404(server):
    status, _, body = get("/no/such/page.html")
    assert status == 404 and b"Page not found" in body


def test_no_directory_listing(server):
    status, _, body = get("/downloads/")
    assert status in (403, 404) and b"NOTES.txt" not in body


def test_css_is_cached(server):
    status, headers, body = get("/css/site.css")
    assert status == 200 and body == (PUBLIC / "css/site.css").read_bytes()
    assert headers.get("cache-control") == "public, max-age=86400"
    _, headers, _ = get("/")
    assert "max-age=86400" not in headers.get("cache-control", "")


def test_healthz(server):
    status, headers, body = get("/healthz")
    assert status == 200 and body == b"ok"
    assert headers["content-type"].split(";")[0] == "text/plain"


def test_server_header_hides_the_version(server):
    _, headers, _ = get("/")
    assert headers.get("server", "nginx") == "nginx"
