"""The items API: a tiny JSON service on 127.0.0.1:9100."""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ITEMS = [{"id": i, "name": f"item {i}"} for i in range(1, 11)]


class Handler(BaseHTTPRequestHandler):
    def send(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/items":
            limit = int(parse_qs(url.query).get("limit", ["10"])[0])
            return self.send(200, ITEMS[:limit])
        self.send(404, {"error": "not found"})

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", 9100), Handler).serve_forever()
