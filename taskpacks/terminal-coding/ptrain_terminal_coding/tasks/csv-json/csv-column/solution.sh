tail -n +2 /workspace/users.csv | cut -d, -f2 > /workspace/emails.txt
