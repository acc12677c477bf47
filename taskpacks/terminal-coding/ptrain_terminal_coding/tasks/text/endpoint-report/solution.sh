cd /workspace && awk '
  /^#/ || NF == 0 { next }
  { path = $3; sub(/\?.*/, "", path); count[path]++; total[path] += $5; if ($4 >= 500) errors[path]++ }
  END { for (p in count) printf "%s %d %d %.0f\n", p, count[p], errors[p] + 0, total[p] / count[p] }
' requests.log | LC_ALL=C sort -k2,2nr -k1,1 > report.txt
