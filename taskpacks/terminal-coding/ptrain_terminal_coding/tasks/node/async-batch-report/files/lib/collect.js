import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export function collect(dir) {
  const summary = { orders: 0, revenue_cents: 0, customers: {}, top_skus: [], errors: [] };
  const skus = {};
  readdir(dir).then((names) => {
    names.forEach(async (name) => {
      const order = JSON.parse(await readFile(path.join(dir, name), "utf8"));
      summary.orders += 1;
      for (const line of order.lines) {
        const amount = line.qty * line.price_cents;
        summary.revenue_cents += amount;
        summary.customers[order.customer] = (summary.customers[order.customer] || "") + amount;
        skus[line.sku] = (skus[line.sku] || 0) + line.qty;
      }
    });
  });
  summary.top_skus = Object.entries(skus).sort((a, b) => b[1] - a[1]).slice(0, 3);
  return summary;
}
