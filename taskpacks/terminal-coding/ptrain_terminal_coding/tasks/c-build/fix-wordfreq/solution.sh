cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("wordfreq.c")
src = p.read_text()
src = src.replace("return strcmp(y->word, x->word);", "return strcmp(x->word, y->word);")
src = src.replace("for (int i = 0; i <= n && i < nentries; i++)", "for (int i = 0; i < n && i < nentries; i++)")
src = src.replace(
    "    qsort(entries",
    "    if (len > 0) {\n        word[len] = '\\0';\n        add_word(word);\n    }\n\n    qsort(entries",
)
p.write_text(src)
PY
make -B
