cd /workspace && cat > src/slug.js <<'JS'
// URL slugs: lower case, accents removed, runs of other characters turned into one dash.
export function slugify(text) {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
JS
python3 - <<'PY'
from pathlib import Path
t = Path("src/truncate.js")
t.write_text(t.read_text().replace("function truncate", "export function truncate").replace("\nmodule.exports = { truncate };\n", ""))
w = Path("src/words.js")
w.write_text(w.read_text().replace('const { slugify } = require("./slug");', 'import { slugify } from "./slug.js";')
             .replace("function wordCount", "export function wordCount").replace("\nmodule.exports = { wordCount };\n", ""))
Path("src/index.js").write_text('''import { slugify } from "./slug.js";
import { truncate } from "./truncate.js";
import { wordCount } from "./words.js";

export { slugify, truncate, wordCount };
export default { slugify, truncate, wordCount };
''')
b = Path("bin/textkit.js")
b.write_text(b.read_text().replace('const { slugify, truncate, wordCount } = require("../src");', 'import { slugify, truncate, wordCount } from "../src/index.js";'))
import json
p = Path("package.json")
pkg = json.loads(p.read_text())
pkg["main"] = "src/index.js"
pkg["exports"] = {".": "./src/index.js"}
p.write_text(json.dumps(pkg, indent=2) + "\n")
PY
node bin/textkit.js slug 'Hello World'
