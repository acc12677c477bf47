"""A tiny stock-keeping package: items, a store that tracks quantities, and a report."""
