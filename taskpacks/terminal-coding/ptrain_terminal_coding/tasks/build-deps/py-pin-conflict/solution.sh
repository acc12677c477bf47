cd /workspace && cat > requirements.txt <<'REQ'
# pinned by the release checklist
chronos==2.1
fmtlib==1.0
REQ
sed -i 's/fmtlib.format_size(/fmtlib.human_size(/g' reportgen/report.py
python3 tools/install.py && printf 'path,bytes,modified\nx,2048,2024-01-01\n' > /tmp/l.csv && PYTHONPATH=.deps python3 -m reportgen /tmp/l.csv --today 2024-06-01
