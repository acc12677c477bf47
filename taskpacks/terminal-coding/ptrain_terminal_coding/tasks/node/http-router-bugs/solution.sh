cd /workspace && cat > lib/router.js <<'JS'
// A minimal router: routes like "/bookmarks/:id" with named parameters.
export class Router {
  constructor() {
    this.routes = [];
  }

  add(method, pattern, handler) {
    const names = [];
    const regex = new RegExp("^" + pattern.replace(/:(\w+)/g, (_, n) => (names.push(n), "([^/]+)")) + "$");
    this.routes.push({ method, regex, names, handler });
  }

  async handle(req, res) {
    const url = new URL(req.url, "http://localhost");
    let pathname = url.pathname;
    if (pathname.length > 1 && pathname.endsWith("/")) pathname = pathname.replace(/\/+$/, "") || "/";
    const allowed = [];
    for (const route of this.routes) {
      const m = pathname.match(route.regex);
      if (!m) continue;
      if (route.method !== req.method) {
        allowed.push(route.method);
        continue;
      }
      let params;
      try {
        params = Object.fromEntries(route.names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
      } catch {
        return send(res, 400, { error: "bad path" });
      }
      try {
        return await route.handler(req, res, params, url.searchParams);
      } catch (err) {
        if (err instanceof HttpError) return send(res, err.status, { error: err.message });
        return send(res, 500, { error: "internal error" });
      }
    }
    if (allowed.length) {
      res.setHeader("Allow", [...new Set(allowed)].sort().join(", "));
      return send(res, 405, { error: "method not allowed" });
    }
    send(res, 404, { error: "not found" });
  }
}

export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function send(res, status, body) {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(text);
}

export async function readJson(req) {
  let data = "";
  for await (const chunk of req) data += chunk;
  try {
    return JSON.parse(data);
  } catch {
    throw new HttpError(400, "invalid JSON");
  }
}
JS
cat > server.js <<'JS'
import http from "node:http";
import { Router, HttpError, send, readJson } from "./lib/router.js";

const bookmarks = new Map();
let nextId = 1;
const router = new Router();

router.add("GET", "/bookmarks", (req, res, params, query) => {
  const tag = query.get("tag");
  send(res, 200, [...bookmarks.values()].filter((b) => tag === null || b.tags.includes(tag)));
});
router.add("POST", "/bookmarks", async (req, res) => {
  const body = await readJson(req);
  if (body === null || typeof body !== "object" || typeof body.url !== "string" || body.url === "") {
    throw new HttpError(400, "url must be a non-empty string");
  }
  const tags = body.tags === undefined ? [] : body.tags;
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === "string")) throw new HttpError(400, "tags must be an array of strings");
  const bookmark = { id: nextId++, url: body.url, tags };
  bookmarks.set(bookmark.id, bookmark);
  send(res, 201, bookmark);
});
router.add("GET", "/bookmarks/:id", (req, res, { id }) => {
  const b = bookmarks.get(Number(id));
  b ? send(res, 200, b) : send(res, 404, { error: "not found" });
});
router.add("DELETE", "/bookmarks/:id", (req, res, { id }) => {
  bookmarks.delete(Number(id)) ? send(res, 204) : send(res, 404, { error: "not found" });
});
router.add("GET", "/tags/:tag", (req, res, { tag }) => send(res, 200, [...bookmarks.values()].filter((b) => b.tags.includes(tag))));

http.createServer((req, res) => router.handle(req, res)).listen(Number(process.env.PORT || 8000), "127.0.0.1");
JS
