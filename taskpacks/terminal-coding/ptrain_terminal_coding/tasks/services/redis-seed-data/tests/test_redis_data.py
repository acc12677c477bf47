import socket
import subprocess
import time
from pathlib import Path

import pytest

PASSWORD = "orchard-7"


def users():
    import random

    r = random.Random(2024)
    first = ["ana", "ben", "chloe", "dev", "eli", "fatima", "gus", "hana", "ivan", "june", "kai", "lena"]
    plans = ["free", "pro", "team"]
    rows = []
    for uid in range(1, 121):
        name = f"{r.choice(first)} {r.choice(first).title()}son"
        rows.append(
            {
                "id": str(uid),
                "name": name.title(),
                "email": f"user{uid}@example.org",
                "plan": r.choice(plans),
                "signup_day": str(19000 + r.randint(0, 600)),
            }
        )
    return rows


@pytest.fixture(scope="module")
def server():
    conf = Path("/workspace/redis/redis.conf")
    assert conf.is_file(), "no /workspace/redis/redis.conf"
    proc = subprocess.Popen(
        ["redis-server", str(conf), "--daemonize", "no"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    deadline = time.time() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", 6390), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                log = Path("/tmp/redis-users.log")
                raise AssertionError(
                    "redis did not start: "
                    + proc.stdout.read().decode()[-2000:]
                    + (log.read_text()[-2000:] if log.exists() else "")
                ) from None
            time.sleep(0.1)
    time.sleep(0.3)
    yield proc
    proc.terminate()
    proc.wait(timeout=10)


def cli(*args, password=PASSWORD):
    cmd = ["redis-cli", "-h", "127.0.0.1", "-p", "6390", "--no-auth-warning"] + (["-a", password] if password else [])
    out = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=30)
    return out.stdout.rstrip("\n")


def test_the_data_files_are_in_the_workspace():
    assert Path("/workspace/redis/data/users.rdb").is_file()
    assert not list(Path("/workspace/redis/data").glob("appendonly*"))


def test_password_is_required(server):
    assert "NOAUTH" in cli("PING", password=None)
    assert cli("PING") == "PONG"
    assert cli("CONFIG", "GET", "port").splitlines() == ["port", "6390"]
    assert cli("CONFIG", "GET", "appendonly").splitlines() == ["appendonly", "no"]
    assert cli("CONFIG", "GET", "dir").splitlines() == ["dir", "/workspace/redis/data"]
    assert cli("CONFIG", "GET", "dbfilename").splitlines() == ["dbfilename", "users.rdb"]


def test_every_user_hash(server):
    rows = users()
    for row in rows:
        fields = cli("HGETALL", f"user:{row['id']}").splitlines()
        assert dict(zip(fields[::2], fields[1::2], strict=False)) == {k: row[k] for k in ("name", "email", "plan")}, (
            row["id"]
        )


def test_signup_index(server):
    rows = users()
    got = cli("ZRANGE", "users:by_signup", "0", "-1", "WITHSCORES").splitlines()
    assert dict(zip(got[::2], (int(float(s)) for s in got[1::2]), strict=False)) == {
        r["id"]: int(r["signup_day"]) for r in rows
    }


def test_plan_sets_and_nothing_else(server):
    rows = users()
    plans = sorted({r["plan"] for r in rows})
    for plan in plans:
        assert set(cli("SMEMBERS", f"plan:{plan}").splitlines()) == {r["id"] for r in rows if r["plan"] == plan}
    want = {f"user:{r['id']}" for r in rows} | {"users:by_signup"} | {f"plan:{p}" for p in plans}
    assert set(cli("KEYS", "*").splitlines()) == want
