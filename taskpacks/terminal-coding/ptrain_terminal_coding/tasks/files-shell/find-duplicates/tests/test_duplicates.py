from pathlib import Path

PHOTOS = Path("/workspace/photos")
GROUPS = [
    ["2023/empty2.jpg", "inbox/empty1.jpg"],
    ["2023/summer/beach.jpg", "2024/spring/copy_of_beach.jpg", "inbox/img_0042.jpg"],
    ["2023/winter/mountain.jpg", "inbox/img_0043.jpg"],
    ["2024/spring/tulips.jpg", "2024/spring/yellow_tulips.jpg"],
]
UNIQUE = {
    "2024/spring/cat.jpg": "JPEG cat on sofa\n",
    "inbox/img_0044.jpg": "JPEG cat on sofa \n",
    "2023/summer/dog.jpg": "JPEG dog\n",
    "2023/winter/snowman.jpg": "JPEG snowman\n",
    "inbox/img_0045.jpg": "JPEG tulip\n",
}


def test_duplicates_txt_lists_each_group():
    lines = [line.split() for line in Path("/workspace/duplicates.txt").read_text().splitlines() if line.strip()]
    lines = [[p[2:] if p.startswith("./") else p for p in line] for line in lines]
    assert lines == GROUPS


def test_only_the_first_of_each_group_is_left():
    left = sorted(str(p.relative_to(PHOTOS)) for p in PHOTOS.rglob("*") if p.is_file())
    assert left == sorted([group[0] for group in GROUPS] + list(UNIQUE))


def test_kept_files_are_unchanged():
    for rel, content in UNIQUE.items():
        assert (PHOTOS / rel).read_text() == content
    assert (PHOTOS / "2023/summer/beach.jpg").read_text() == "JPEG beach sunset\n"
    assert (PHOTOS / "2023/empty2.jpg").read_text() == ""
