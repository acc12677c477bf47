import csv
from pathlib import Path

EXPECTED = [
    ["order_id", "customer", "sku", "title", "qty", "line_total"],
    ["1013", "Li Wei", "BK-7", 'The "Little" Prince', "1", "8.50"],
    ["1013", "Li Wei", "GD-2", "Garden hose, 25 m", "1", "34.00"],
    ["1013", "Li Wei", "TL-3", "Hammer", "1", "19.99"],
    ["1031", "Müller, Anna", "AA-1", "Bookmark", "10", "12.50"],
    ["1031", "Müller, Anna", "KT-9", "Kettle", "2", "49.90"],
    ["1042", "Smith, Jane", "AA-1", "Bookmark", "3", "3.75"],
    ["1042", "Smith, Jane", "BK-7", 'The "Little" Prince', "2", "17.00"],
]


def test_order_lines_csv_has_the_expected_rows():
    with open("/workspace/order_lines.csv", newline="", encoding="utf-8") as f:
        rows = [row for row in csv.reader(f) if row]
    assert rows == EXPECTED


def test_file_is_plain_csv_with_commas():
    text = Path("/workspace/order_lines.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0].strip() == "order_id,customer,sku,title,qty,line_total"
