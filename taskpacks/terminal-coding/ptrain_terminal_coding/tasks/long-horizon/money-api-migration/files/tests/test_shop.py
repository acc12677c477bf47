"""The repository's own tests (python3 -m pytest tests)."""

from shopcore import legacy
from shopcore.cart import Cart
from shopcore.checkout import summary


def test_cart_subtotal():
    cart = Cart()
    cart.add("P001", 2)
    assert cart.subtotal() == legacy.get_price("P001") * 2


def test_summary_has_four_amounts():
    cart = Cart()
    cart.add("P002")
    assert set(summary(cart)) == {"subtotal", "discount", "vat", "total"}
