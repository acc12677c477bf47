import json
import random
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def reference(data):
    sub = sum(Decimal(i["quantity"]) * Decimal(i["unit_price"]) for i in data["items"])
    disc = (sub * Decimal(data.get("discount", "0")) / 100).quantize(CENT, ROUND_HALF_UP)
    tax = ((sub - disc) * Decimal(data["tax_rate"]) / 100).quantize(CENT, ROUND_HALF_UP)
    return sub.quantize(CENT), disc, tax, sub - disc + tax


def invoice(data):
    from ledger.invoice import Invoice

    return Invoice.from_dict(data)


def test_the_reported_cent():
    inv = invoice({"items": [{"sku": "A", "quantity": 1, "unit_price": "2.96"}], "tax_rate": "6.25"})
    assert inv.tax() == Decimal("0.19") and inv.total() == Decimal("3.15")
    assert isinstance(inv.total(), Decimal) and str(inv.total()) == "3.15"


def test_subtotal_is_exact():
    inv = invoice({"items": [{"sku": "A", "quantity": 3, "unit_price": "0.10"}], "tax_rate": "0"})
    assert inv.subtotal() == Decimal("0.30") and str(inv.subtotal()) == "0.30"
    assert str(inv.tax()) == "0.00" and str(inv.total()) == "0.30"


def test_random_invoices_match_the_accountant():
    r = random.Random(11)
    for _ in range(300):
        data = {
            "items": [{"sku": f"S{k}", "quantity": r.randint(1, 9), "unit_price": f"{r.randint(1, 9999) / 100:.2f}"}
                      for k in range(r.randint(1, 5))],
            "tax_rate": r.choice(["6.25", "8.25", "7", "19", "0", "5.5"]),
        }  # fmt: skip
        if r.random() < 0.5:
            data["discount"] = r.choice(["10", "12.5", "3", "15"])
        inv = invoice(data)
        got = (inv.subtotal(), inv.discount(), inv.tax(), inv.total())
        assert got == reference(data), data
        assert all(isinstance(x, Decimal) and x.as_tuple().exponent == -2 for x in got), got


def test_the_printed_invoice(tmp_path):
    data = {"items": [{"sku": "A1", "quantity": 1, "unit_price": "2.96"}, {"sku": "B2", "quantity": 3, "unit_price": "0.10"}],
            "tax_rate": "6.25", "discount": "12.5"}  # fmt: skip
    path = tmp_path / "inv.json"
    path.write_text(json.dumps(data))
    out = subprocess.run(
        [sys.executable, "-m", "ledger", str(path)], cwd="/workspace", capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    sub, disc, tax, total = reference(data)
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["A1", "1", "x", "2.96", "=", "2.96"]
    assert lines[1].split() == ["B2", "3", "x", "0.10", "=", "0.30"]
    assert [line.split() for line in lines[2:]] == [
        ["subtotal", str(sub)],
        ["discount", str(disc)],
        ["tax", str(tax)],
        ["total", str(total)],
    ]
