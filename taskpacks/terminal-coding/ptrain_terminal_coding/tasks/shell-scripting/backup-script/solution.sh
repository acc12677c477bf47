cat > /workspace/backup.sh <<'SH'
#!/bin/bash
# Copy SRC/*.conf into DEST as *.conf.bak and print how many were copied.
src="$1"
dest="$2"
if [ ! -d "$src" ]; then
    echo "backup.sh: $src is not a directory" >&2
    exit 1
fi
mkdir -p "$dest" || exit 1
count=0
for f in "$src"/*.conf; do
    [ -f "$f" ] || continue
    cp "$f" "$dest/$(basename "$f").bak" || exit 1
    count=$((count + 1))
done
echo "$count"
SH
chmod +x /workspace/backup.sh
