import random
import subprocess
from collections import Counter


def write_inputs(directory, seed, n_users, n_events):
    r = random.Random(seed)
    users = [f"u{r.randint(0, 10**6)}n{i}" for i in range(n_users)]
    users.append(users[0])  # a user listed twice is printed twice
    active = users[: int(n_users * 0.9)]
    actions = ["login", "logout", "view", "edit", "login", "upload", "relogin"]
    events = [(r.choice(active), r.choice(actions)) for _ in range(n_events)]
    (directory / "users.txt").write_text("".join(u + "\n" for u in users))
    (directory / "events.log").write_text("".join(f"{u} {a}\n" for u, a in events))
    total = Counter(u for u, _ in events)
    logins = Counter(u for u, a in events if a == "login")
    return [f"{u} {total[u]} {logins[u]}" for u in users]


def run(directory, timeout):
    return subprocess.run(
        ["bash", "/workspace/activity.sh", str(directory / "users.txt"), str(directory / "events.log")],
        capture_output=True, text=True, timeout=timeout,
    )


def test_small_input_matches_the_documented_output(tmp_path):
    expected = write_inputs(tmp_path, 3, 30, 400)
    out = run(tmp_path, 30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expected


def test_prefix_names_are_not_confused(tmp_path):
    (tmp_path / "users.txt").write_text("al\nalice\nbob\n")
    (tmp_path / "events.log").write_text("alice login\nal view\nalice login\nbob relogin\nalice edit\n")
    out = run(tmp_path, 30)
    assert out.stdout.splitlines() == ["al 1 0", "alice 3 2", "bob 1 0"]


def test_large_input_within_10_seconds(tmp_path):
    expected = write_inputs(tmp_path, 4, 4000, 120000)
    out = run(tmp_path, 10)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expected
