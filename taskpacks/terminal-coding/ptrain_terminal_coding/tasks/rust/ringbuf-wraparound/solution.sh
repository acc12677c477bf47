cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("src/lib.rs")
s = p.read_text()
s = s.replace("""    pub fn new(capacity: usize) -> Self {
        let mut slots""", """    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "RingBuffer capacity must be at least 1");
        let mut slots""")
s = s.replace("""        if self.is_full() {
            let old = self.slots[tail - 1].replace(value);
            self.len += 1;
            return old;
        }""", """        if self.is_full() {
            let old = self.slots[self.head].replace(value);
            self.head = (self.head + 1) % self.capacity();
            return old;
        }""")
s = s.replace("        self.head += 1;\n        self.len -= 1;", "        self.head = (self.head + 1) % self.capacity();\n        self.len -= 1;")
s = s.replace("        self.slots[i].as_ref()\n", "        self.slots[(self.head + i) % self.capacity()].as_ref()\n")
s = s.replace("        self.slots.iter().filter_map(|s| s.as_ref())\n", "        (0..self.len).filter_map(move |i| self.get(i))\n")
p.write_text(s)
PY
CARGO_TARGET_DIR=/tmp/rb-target cargo test --offline -q 2>&1 | tail -3
