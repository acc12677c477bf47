"""python3 -m shopcore quote SKU=QTY... [--discount P] [--vat R]"""

import argparse

from shopcore.cart import Cart
from shopcore.invoice import render

parser = argparse.ArgumentParser(prog="shopcore")
sub = parser.add_subparsers(dest="command", required=True)
quote = sub.add_parser("quote")
quote.add_argument("items", nargs="+")
quote.add_argument("--discount", type=float, default=0)
quote.add_argument("--vat", type=float, default=25)
args = parser.parse_args()
cart = Cart()
for item in args.items:
    sku, _, qty = item.partition("=")
    cart.add(sku, int(qty or 1))
print(render(cart, args.discount, args.vat), end="")
