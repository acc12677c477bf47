grep -oE '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}' /workspace/contacts.txt | sort -u > /workspace/emails.txt
