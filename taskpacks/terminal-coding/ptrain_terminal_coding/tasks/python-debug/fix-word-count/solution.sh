cd /workspace && sed -i 's/return word.strip(string.punctuation)/return word.strip(string.punctuation).lower()/; s/text.split(" ")/text.split()/' textstats/words.py
