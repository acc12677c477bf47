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
    for (const route of this.routes) {
      const m = req.url.match(route.regex);
      if (m && route.method === req.method) {
        const params = Object.fromEntries(route.names.map((n, i) => [n, m[i + 1]]));
        return route.handler(req, res, params);
      }
    }
    send(res, 404, { error: "not found" });
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
  return JSON.parse(data);
}
