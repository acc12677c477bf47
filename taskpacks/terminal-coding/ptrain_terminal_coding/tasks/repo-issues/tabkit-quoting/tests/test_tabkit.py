import csv
import io
import subprocess
import sys

ROWS = [
    ["name", "city", "note", "score"],
    ["Ada Lovelace", "London", "", "10"],
    ["Smith, John", "Paris", 'said "hi"', "7"],
    ["Bob", "Rome, IT", "", ""],
    ['"quoted"', "x", "a,b,c", "3"],
    ["Eve", "Oslo", "plain", "1"],
]


def convert(tmp_path, rows):
    src, dst = tmp_path / "in.tsv", tmp_path / "out.csv"
    src.write_text("".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "tabkit", "convert", str(src), str(dst)],
                         cwd="/workspace", capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return dst.read_bytes()


def expected(rows):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return buf.getvalue().encode()


def test_fields_with_commas_and_quotes_round_trip(tmp_path):
    data = convert(tmp_path, ROWS)
    assert list(csv.reader(io.StringIO(data.decode(), newline=""))) == ROWS


def test_quoting_is_minimal_like_the_csv_module(tmp_path):
    assert convert(tmp_path, ROWS) == expected(ROWS)


def test_rows_with_empty_last_column_keep_their_width(tmp_path):
    rows = [["a", "b", "c"], ["1", "", ""], ["", "", "3"], ["x y", "z", ""]]
    assert convert(tmp_path, rows) == expected(rows)


def test_stats_still_counts(tmp_path):
    src = tmp_path / "s.tsv"
    src.write_text("a\tb\n1\t\n2\t3\n")
    out = subprocess.run([sys.executable, "-m", "tabkit", "stats", str(src)],
                         cwd="/workspace", capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.stdout.strip() == "2 rows, 2 columns"


def test_library_reader_and_shape_check(tmp_path):
    from tabkit.reader import read_tsv
    from tabkit.schema import ShapeError, check_rows

    src = tmp_path / "r.tsv"
    src.write_text("h1\th2\n\nv1\t\n")
    assert read_tsv(src) == [["h1", "h2"], ["v1", ""]]
    try:
        check_rows([["a", "b"], ["1"]])
    except ShapeError as e:
        assert "row 2 has 1 fields" in str(e)
    else:
        raise AssertionError("a short row must raise ShapeError")
