import csv
import io
import json
import random
import subprocess

HARNESS = r"""
import { CsvParser } from "/workspace/src/parser.js";
import { readFileSync } from "node:fs";
const data = readFileSync(process.argv[2]);
const results = [];
for (const sizes of JSON.parse(process.argv[3])) {
  results.push(await new Promise((resolve) => {
    const p = new CsvParser();
    const out = [];
    p.on("data", (r) => out.push(r));
    p.on("error", (e) => resolve({ error: e.message }));
    p.on("end", () => resolve({ records: out }));
    let pos = 0, k = 0;
    while (pos < data.length) {
      const n = sizes[k++ % sizes.length];
      p.write(data.subarray(pos, pos + n));
      pos += n;
    }
    p.end();
  }));
}
console.log(JSON.stringify(results));
"""


def records_of(text):
    return [r for r in csv.reader(io.StringIO(text, newline="")) if r]


def sample(seed):
    r = random.Random(seed)
    pool = ["plain", "with, comma", 'say "hi"', "multi\nline", "crlf\r\nline", "ünïcödé ✓", "", "€uro", '""', "tail "]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator=r.choice(["\n", "\r\n"]))
    for _ in range(60):
        w.writerow([r.choice(pool) for _ in range(4)])
    return buf.getvalue()


def parse_all(tmp_path, text, size_lists):
    path = tmp_path / "in.csv"
    path.write_bytes(text.encode())
    (tmp_path / "h.mjs").write_text(HARNESS)
    out = subprocess.run(
        ["node", str(tmp_path / "h.mjs"), str(path), json.dumps(size_lists)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def parse(tmp_path, text, sizes):
    return parse_all(tmp_path, text, [sizes])[0]


def test_chunking_does_not_matter(tmp_path):
    for seed in range(4):
        text = sample(seed)
        want = records_of(text)
        size_lists = [[1], [2, 3], [7], [64], [1, 5, 1, 13], [100000]]
        for sizes, got in zip(size_lists, parse_all(tmp_path, text, size_lists), strict=True):
            assert got == {"records": want}, (seed, sizes)


def test_no_trailing_newline_and_empty_lines(tmp_path):
    text = 'a,b\n\n1,"x\ny"\r\n\r\nlast,row'
    for got in parse_all(tmp_path, text, [[1], [3], [1000]]):
        assert got == {"records": [["a", "b"], ["1", "x\ny"], ["last", "row"]]}


def test_unterminated_quote_is_an_error(tmp_path):
    got = parse(tmp_path, 'a,b\n1,"never closed\n', [4])
    assert "unterminated" in got.get("error", "")


def test_cli(tmp_path):
    text = 'name,note\nAda,"likes, commas"\nBob,"say ""hi"""\n'
    out = subprocess.run(
        ["node", "bin/csv2json.js"], input=text, cwd="/workspace", capture_output=True, text=True, timeout=60
    )
    assert json.loads(out.stdout) == [{"name": "Ada", "note": "likes, commas"}, {"name": "Bob", "note": 'say "hi"'}]
