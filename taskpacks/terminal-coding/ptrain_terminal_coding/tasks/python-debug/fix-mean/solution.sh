cd /workspace && sed -i 's|return sum(xs) / (len(xs) - 1)|return sum(xs) / len(xs)|' stats/__init__.py
