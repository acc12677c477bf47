cd /workspace && git checkout -q main && git merge feature -m 'Merge branch feature' >/dev/null 2>&1
cd /workspace && printf 'HOST = "localhost"\nPORT = 8080\nTIMEOUT = 30\nDEBUG = False\n' > settings.py && git add settings.py && git commit -qm 'Merge branch feature'
