import functools
import random
import subprocess
import sys

SPEC_ORDER = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
              "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]  # fmt: skip


def ref_key(text):
    core, _, _build = text.partition("+")
    core, _, pre = core.partition("-")
    nums = tuple(int(x) for x in core.split("."))
    return nums, pre


def ref_cmp(a, b):
    (na, pa), (nb, pb) = ref_key(a), ref_key(b)
    if na != nb:
        return -1 if na < nb else 1
    if pa == pb:
        return 0
    if not pa or not pb:
        return 1 if not pa else -1
    xs, ys = pa.split("."), pb.split(".")
    for x, y in zip(xs, ys, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return (len(xs) > len(ys)) - (len(xs) < len(ys))


def random_versions(seed, n):
    r = random.Random(seed)
    idents = ["alpha", "beta", "rc", "Alpha", "x-y", "0", "1", "2", "9", "10", "11", "100", "a1", "1a"]
    out = set()
    while len(out) < n:
        v = f"{r.randint(0, 2)}.{r.randint(0, 10)}.{r.randint(0, 3)}"
        if r.random() < 0.7:
            v += "-" + ".".join(r.choice(idents) for _ in range(r.randint(1, 3)))
        if r.random() < 0.2:
            v += "+build." + str(r.randint(1, 99))
        out.add(v)
    return sorted(out)


def cli(*args, stdin):
    out = subprocess.run([sys.executable, "-m", "verkit", *args], input=stdin, cwd="/workspace",
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    return out


def test_the_spec_example_order():
    from verkit import Version

    shuffled = SPEC_ORDER[:]
    random.Random(3).shuffle(shuffled)
    assert [str(v) for v in sorted(Version.parse(s) for s in shuffled)] == SPEC_ORDER


def test_numeric_identifiers_compare_numerically():
    from verkit import Version

    assert Version.parse("1.0.0-rc.9") < Version.parse("1.0.0-rc.10")
    assert Version.parse("1.0.0-2") < Version.parse("1.0.0-10")
    assert Version.parse("1.0.0-999") < Version.parse("1.0.0-a")


def test_build_metadata_is_ignored():
    from verkit import Version

    a, b = Version.parse("1.0.0+build.5"), Version.parse("1.0.0+build.7")
    assert a == b and not a < b and not b < a and hash(a) == hash(b)
    assert str(a) == "1.0.0+build.5"


def test_random_versions_sort_like_the_spec():
    from verkit import Version

    for seed in range(5):
        versions = random_versions(seed, 80)
        got = [ref_key(str(v)) for v in sorted(Version.parse(s) for s in versions)]
        want = [ref_key(s) for s in sorted(versions, key=functools.cmp_to_key(ref_cmp))]
        assert got == want
        for a, b in zip(versions, versions[1:], strict=False):
            assert (Version.parse(a) < Version.parse(b)) == (ref_cmp(a, b) < 0), (a, b)


def test_cli_sort_and_max():
    lines = ["1.0.0", "1.0.0-rc.10", "1.0.0-rc.9", "0.9.0", "1.0.0-alpha"]
    out = cli("sort", stdin="\n".join(lines) + "\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0.9.0", "1.0.0-alpha", "1.0.0-rc.9", "1.0.0-rc.10", "1.0.0"]
    out = cli("max", "<1.0.0", stdin="\n".join(lines) + "\n")
    assert out.stdout.strip() == "1.0.0-rc.10"


def test_ranges_still_work():
    from verkit import satisfies

    assert satisfies("1.4.2", ">=1.4.0 <2.0.0")
    assert not satisfies("2.0.0", ">=1.4.0 <2.0.0")
    assert satisfies("1.4.0", "=1.4.0") and satisfies("1.4.0", "1.4.0")
    assert not satisfies("2.0.0-rc.1", ">=2.0.0")
