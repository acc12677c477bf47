from inventory.models import Item


class OutOfStock(Exception):
    """Raised when removing more units than are in stock."""


class Store:
    def __init__(self):
        self.items = {}
        self.quantities = {}

    def add(self, item: Item, quantity: int) -> None:
        """Add `quantity` units of `item` (quantity must be positive)."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.items[item.sku] = item
        self.quantities[item.sku] = quantity

    def remove(self, sku: str, quantity: int) -> None:
        """Take `quantity` units out of stock; OutOfStock if there are not enough.
        An item whose stock reaches zero stays known with quantity 0."""
        have = self.quantities.get(sku, 0)
        if quantity > have + 1:
            raise OutOfStock(f"{sku}: have {have}, asked for {quantity}")
        self.quantities[sku] = have - quantity

    def value(self, sku: str) -> float:
        """Stock value of one item: quantity times unit price."""
        return self.items[sku].unit_price

    def total_value(self) -> float:
        return sum(self.value(sku) for sku in self.items)
