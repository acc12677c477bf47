import http from "node:http";
import { Router, send, readJson } from "./lib/router.js";

const bookmarks = new Map();
let nextId = 1;
const router = new Router();

router.add("GET", "/bookmarks", (req, res) => send(res, 200, [...bookmarks.values()]));
router.add("POST", "/bookmarks", async (req, res) => {
  const body = await readJson(req);
  const bookmark = { id: nextId++, url: body.url, tags: body.tags || [] };
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
