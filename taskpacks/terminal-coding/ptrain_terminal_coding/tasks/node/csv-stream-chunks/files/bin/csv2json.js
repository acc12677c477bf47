import { CsvParser } from "../src/parser.js";

const records = [];
process.stdin
  .pipe(new CsvParser())
  .on("data", (r) => records.push(r))
  .on("error", (e) => {
    console.error("csv2json: " + e.message);
    process.exit(1);
  })
  .on("end", () => {
    const [header, ...rows] = records;
    console.log(JSON.stringify(rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ""])))));
  });
