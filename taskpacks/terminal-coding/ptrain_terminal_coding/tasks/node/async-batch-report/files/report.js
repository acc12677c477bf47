import { writeFile } from "node:fs/promises";
import { collect } from "./lib/collect.js";

const [dir, out] = process.argv.slice(2);
const summary = collect(dir);
await writeFile(out, JSON.stringify(summary, null, 2));
