import pytest

from ledger import Entry, Ledger, StockError


@pytest.fixture
def ledger():
    book = Ledger()
    book.receive("bolt", "north", 100)
    book.receive("bolt", "south", 40)
    book.receive("nut", "north", 25)
    return book


def test_a_new_ledger_is_empty():
    book = Ledger()
    assert book.quantity("bolt") == 0
    assert book.items() == []
    assert book.report() == ""


def test_receiving_adds_stock_per_location(ledger):
    assert ledger.quantity("bolt", "north") == 100
    assert ledger.quantity("bolt", "south") == 40
    assert ledger.quantity("bolt") == 140
    assert ledger.quantity("nut") == 25


def test_receiving_needs_a_positive_count(ledger):
    with pytest.raises(ValueError):
        ledger.receive("bolt", "north", 0)
    with pytest.raises(ValueError):
        ledger.receive("bolt", "north", -3)


def test_shipping_takes_stock_away(ledger):
    ledger.ship("bolt", "north", 30)
    assert ledger.quantity("bolt", "north") == 70
    assert ledger.quantity("bolt") == 110


def test_shipping_all_the_stock_is_allowed(ledger):
    ledger.ship("nut", "north", 25)
    assert ledger.quantity("nut") == 0


def test_shipping_more_than_the_location_holds_is_refused(ledger):
    with pytest.raises(StockError, match="only 40 of bolt at south"):
        ledger.ship("bolt", "south", 41)
    assert ledger.quantity("bolt", "south") == 40


def test_shipping_needs_a_positive_count(ledger):
    with pytest.raises(ValueError):
        ledger.ship("bolt", "north", 0)


def test_moving_stock_between_locations_keeps_the_total(ledger):
    ledger.move("bolt", "north", "south", 60)
    assert ledger.quantity("bolt", "north") == 40
    assert ledger.quantity("bolt", "south") == 100
    assert ledger.quantity("bolt") == 140


def test_moving_to_the_same_location_is_refused(ledger):
    with pytest.raises(ValueError):
        ledger.move("bolt", "north", "north", 1)


def test_moving_more_than_the_source_holds_changes_nothing(ledger):
    with pytest.raises(StockError):
        ledger.move("nut", "north", "south", 26)
    assert ledger.locations("nut") == {"north": 25}


def test_undo_takes_back_the_last_change(ledger):
    ledger.ship("bolt", "north", 10)
    undone = ledger.undo()
    assert undone == Entry("bolt", "north", -10)
    assert ledger.quantity("bolt", "north") == 100


def test_undo_takes_back_both_halves_of_a_move(ledger):
    ledger.move("bolt", "north", "east", 5)
    ledger.undo()
    assert ledger.locations("bolt") == {"north": 100, "south": 40}
    assert len(ledger.entries) == 3


def test_undo_of_a_receive_with_a_from_note_keeps_earlier_entries(ledger):
    ledger.receive("nut", "south", 3, note="from supplier")
    ledger.undo()
    assert len(ledger.entries) == 3


def test_undo_on_an_empty_ledger_is_an_error():
    with pytest.raises(StockError):
        Ledger().undo()


def test_locations_lists_non_empty_locations_in_order(ledger):
    ledger.receive("bolt", "east", 1)
    ledger.ship("bolt", "south", 40)
    assert ledger.locations("bolt") == {"east": 1, "north": 100}
    assert list(ledger.locations("bolt")) == ["east", "north"]


def test_items_lists_what_is_in_stock(ledger):
    ledger.receive("washer", "east", 2)
    ledger.ship("nut", "north", 25)
    assert ledger.items() == ["bolt", "washer"]


def test_value_uses_prices_and_ignores_unpriced_items(ledger):
    ledger.set_price("bolt", 2)
    assert ledger.value() == 280
    assert ledger.value("bolt") == 280
    assert ledger.value("nut") == 0
    ledger.set_price("nut", 3)
    assert ledger.value() == 355


def test_a_negative_price_is_refused_and_zero_is_allowed(ledger):
    with pytest.raises(ValueError):
        ledger.set_price("bolt", -1)
    ledger.set_price("bolt", 0)
    assert ledger.value("bolt") == 0


def test_low_stock_lists_items_at_or_below_the_threshold_lowest_first(ledger):
    ledger.receive("washer", "east", 25)
    ledger.receive("pin", "east", 5)
    assert ledger.low_stock(25) == ["pin", "nut", "washer"]
    assert ledger.low_stock(24) == ["pin"]
    assert ledger.low_stock(4) == []


def test_low_stock_includes_items_that_ran_out(ledger):
    ledger.ship("nut", "north", 25)
    assert ledger.low_stock(0) == ["nut"]


def test_history_is_newest_first_and_can_be_limited(ledger):
    ledger.ship("bolt", "north", 1, note="order 7")
    assert [e.change for e in ledger.history("bolt")] == [-1, 40, 100]
    assert ledger.history("bolt", limit=1) == [Entry("bolt", "north", -1, "order 7")]
    assert len(ledger.history("bolt", limit=2)) == 2
    assert ledger.history("screw") == []


def test_moves_are_noted_on_both_entries(ledger):
    ledger.move("nut", "north", "south", 5)
    assert [e.note for e in ledger.history("nut", limit=2)] == ["from north", "to south"]


def test_report_lists_items_with_their_locations(ledger):
    assert ledger.report() == "bolt: 140 (north=100, south=40)\nnut: 25 (north=25)"
