from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    sku: str
    name: str
    unit_price: float  # in euros

    def __post_init__(self):
        if self.unit_price < 0:
            raise ValueError(f"negative price for {self.sku}")
