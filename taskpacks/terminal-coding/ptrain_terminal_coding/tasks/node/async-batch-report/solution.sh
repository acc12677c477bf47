cd /workspace && cat > lib/collect.js <<'JS'
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

async function load(dir, name) {
  try {
    const order = JSON.parse(await readFile(path.join(dir, name), "utf8"));
    if (order === null || typeof order !== "object" || order.id === undefined || order.customer === undefined || !Array.isArray(order.lines)) {
      return { name, error: true };
    }
    return { name, order };
  } catch {
    return { name, error: true };
  }
}

export async function collect(dir) {
  const names = (await readdir(dir)).filter((n) => n.endsWith(".json"));
  const results = await Promise.all(names.map((name) => load(dir, name)));
  const summary = { orders: 0, revenue_cents: 0, customers: {}, top_skus: [], errors: [] };
  const skus = {};
  const customers = {};
  for (const r of results) {
    if (r.error) {
      summary.errors.push(r.name);
      continue;
    }
    const { order } = r;
    summary.orders += 1;
    customers[order.customer] = customers[order.customer] || 0;
    for (const line of order.lines) {
      const qty = Number(line.qty);
      const amount = qty * Number(line.price_cents);
      summary.revenue_cents += amount;
      customers[order.customer] += amount;
      skus[line.sku] = (skus[line.sku] || 0) + qty;
    }
  }
  for (const name of Object.keys(customers).sort()) summary.customers[name] = customers[name];
  summary.top_skus = Object.entries(skus)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, 3);
  summary.errors.sort();
  return summary;
}
JS
cat > report.js <<'JS'
import { writeFile } from "node:fs/promises";
import { collect } from "./lib/collect.js";

const [dir, out] = process.argv.slice(2);
const summary = await collect(dir);
await writeFile(out, JSON.stringify(summary, null, 2));
process.exitCode = summary.errors.length ? 1 : 0;
JS
