"""Reading the three inputs."""

import pandas as pd


def load(folder):
    customers = pd.read_csv(f"{folder}/customers.csv")
    addresses = pd.read_csv(f"{folder}/addresses.csv")
    orders = pd.read_csv(f"{folder}/orders.csv")
    return customers, addresses, orders
