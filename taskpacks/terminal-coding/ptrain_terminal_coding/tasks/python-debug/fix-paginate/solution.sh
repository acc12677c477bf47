cd /workspace && sed -i 's|return max(1, total // per_page)|return max(1, -(-total // per_page))|; s|start = page \* per_page|start = (page - 1) * per_page|' pages.py
