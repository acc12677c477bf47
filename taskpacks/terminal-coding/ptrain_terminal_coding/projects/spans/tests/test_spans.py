import pytest

from spans import Span, busiest, coverage, free_slots, gaps, merge, split, total_length


def test_a_span_knows_its_length():
    assert Span(3, 10).length == 7


def test_a_span_that_ends_before_it_starts_is_rejected():
    with pytest.raises(ValueError):
        Span(5, 4)


def test_a_zero_length_span_is_empty_and_others_are_not():
    assert Span(4, 4).is_empty()
    assert not Span(4, 5).is_empty()


def test_contains_includes_the_start_and_excludes_the_end():
    span = Span(2, 5)
    assert span.contains(2)
    assert span.contains(4)
    assert not span.contains(5)
    assert not span.contains(1)


def test_overlapping_spans_overlap_both_ways():
    assert Span(0, 5).overlaps(Span(4, 8))
    assert Span(4, 8).overlaps(Span(0, 5))
    assert Span(0, 10).overlaps(Span(3, 4))


def test_spans_that_only_touch_do_not_overlap():
    assert not Span(0, 5).overlaps(Span(5, 8))
    assert not Span(5, 8).overlaps(Span(0, 5))
    assert not Span(0, 2).overlaps(Span(7, 9))


def test_touching_spans_touch_and_others_do_not():
    assert Span(0, 5).touches(Span(5, 8))
    assert Span(5, 8).touches(Span(0, 5))
    assert not Span(0, 5).touches(Span(6, 8))
    assert not Span(0, 5).touches(Span(4, 8))


def test_intersection_is_the_shared_part():
    assert Span(0, 5).intersection(Span(3, 9)) == Span(3, 5)
    assert Span(3, 9).intersection(Span(0, 5)) == Span(3, 5)
    assert Span(0, 10).intersection(Span(2, 4)) == Span(2, 4)


def test_disjoint_or_touching_spans_have_no_intersection():
    assert Span(0, 3).intersection(Span(5, 9)) is None
    assert Span(0, 5).intersection(Span(5, 9)) is None


def test_shift_moves_both_ends():
    assert Span(2, 5).shift(10) == Span(12, 15)
    assert Span(2, 5).shift(-2) == Span(0, 3)


def test_merge_joins_overlapping_spans():
    assert merge([Span(0, 3), Span(2, 6)]) == [Span(0, 6)]


def test_merge_joins_touching_spans():
    assert merge([Span(0, 3), Span(3, 6)]) == [Span(0, 6)]


def test_merge_keeps_separate_spans_apart_and_sorts_them():
    assert merge([Span(10, 12), Span(0, 3), Span(5, 6)]) == [Span(0, 3), Span(5, 6), Span(10, 12)]


def test_merge_keeps_the_outer_end_when_one_span_contains_another():
    assert merge([Span(0, 10), Span(2, 4)]) == [Span(0, 10)]


def test_merge_drops_empty_spans():
    assert merge([Span(4, 4), Span(0, 2)]) == [Span(0, 2)]
    assert merge([]) == []


def test_merge_of_a_chain_of_spans_is_one_span():
    assert merge([Span(6, 9), Span(0, 4), Span(3, 7)]) == [Span(0, 9)]


def test_total_length_counts_overlaps_once():
    assert total_length([Span(0, 4), Span(2, 6), Span(10, 11)]) == 7
    assert total_length([]) == 0


def test_gaps_are_the_uncovered_parts():
    assert gaps([Span(2, 4), Span(6, 7)], 0, 10) == [Span(0, 2), Span(4, 6), Span(7, 10)]


def test_gaps_ignore_spans_outside_the_window():
    assert gaps([Span(0, 2), Span(20, 30)], 5, 10) == [Span(5, 10)]


def test_gaps_clip_spans_that_stick_out_of_the_window():
    assert gaps([Span(0, 6), Span(8, 20)], 5, 10) == [Span(6, 8)]


def test_a_fully_covered_window_has_no_gaps():
    assert gaps([Span(0, 10)], 2, 8) == []
    assert gaps([Span(0, 5), Span(5, 10)], 0, 10) == []


def test_a_span_ending_at_the_window_start_leaves_the_window_free():
    assert gaps([Span(0, 5)], 5, 8) == [Span(5, 8)]


def test_a_span_starting_at_the_window_end_leaves_the_window_free():
    assert gaps([Span(8, 12)], 5, 8) == [Span(5, 8)]


def test_free_slots_keep_gaps_long_enough():
    busy = [Span(9, 10), Span(11, 13), Span(15, 16)]
    assert free_slots(busy, 8, 18, 2) == [Span(13, 15), Span(16, 18)]
    assert free_slots(busy, 8, 18, 1) == [Span(8, 9), Span(10, 11), Span(13, 15), Span(16, 18)]


def test_split_cuts_a_span_into_pieces():
    assert split(Span(0, 10), 4) == [Span(0, 4), Span(4, 8), Span(8, 10)]
    assert split(Span(3, 9), 3) == [Span(3, 6), Span(6, 9)]


def test_split_needs_a_positive_size():
    with pytest.raises(ValueError):
        split(Span(0, 10), 0)
    assert split(Span(0, 2), 1) == [Span(0, 1), Span(1, 2)]


def test_coverage_counts_spans_containing_a_point():
    spans = [Span(0, 5), Span(3, 8), Span(5, 6)]
    assert coverage(spans, 4) == 2
    assert coverage(spans, 5) == 2
    assert coverage(spans, 0) == 1
    assert coverage(spans, 8) == 0


def test_busiest_finds_the_largest_overlap():
    assert busiest([Span(0, 5), Span(1, 3), Span(2, 8), Span(6, 9)]) == 3
    assert busiest([]) == 0


def test_busiest_does_not_count_touching_spans_as_overlapping():
    assert busiest([Span(0, 5), Span(5, 10)]) == 1
    assert busiest([Span(0, 5), Span(5, 10), Span(3, 3)]) == 1
