import json
import sys

from ledger.formatting import render
from ledger.invoice import Invoice

with open(sys.argv[1]) as f:
    print(render(Invoice.from_dict(json.load(f))))
