cat > /workspace/rotate.sh <<'SH'
#!/bin/bash
# Rotate a log file: FILE -> FILE.1 -> FILE.2 ... keeping KEEP old copies (default 3).
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: rotate.sh FILE [KEEP]" >&2
    exit 2
fi
file="$1"
keep="${2-3}"
if ! [[ "$keep" =~ ^[0-9]+$ ]] || [ "$((10#$keep))" -lt 1 ]; then
    echo "rotate.sh: KEEP must be a positive integer, got '$keep'" >&2
    exit 2
fi
keep=$((10#$keep))
if [ ! -f "$file" ]; then
    echo "rotate.sh: $file is not a regular file" >&2
    exit 1
fi
for old in "$file".*; do
    suffix="${old##"$file".}"
    if [[ "$suffix" =~ ^[0-9]+$ ]] && [ "$((10#$suffix))" -ge "$keep" ]; then
        rm -f -- "$old"
    fi
done
for ((n = keep - 1; n >= 1; n--)); do
    if [ -e "$file.$n" ]; then
        mv -- "$file.$n" "$file.$((n + 1))"
    fi
done
mv -- "$file" "$file.1"
: > "$file"
SH
chmod +x /workspace/rotate.sh
