"""The tests start their own redis-server (config in /tmp) and use the workspace's client against it."""

import socket
import subprocess
import time

import pytest

PORT = 6391


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("redis")
    conf = tmp / "redis.conf"
    conf.write_text(
        f'bind 127.0.0.1\nport {PORT}\ndir {tmp}\nsave ""\nappendonly no\nrequirepass pw-test\nlogfile {tmp}/log\n'
    )
    proc = subprocess.Popen(["redis-server", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.time() < deadline, "redis-server did not start"
            time.sleep(0.1)
    yield
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def client(server):
    from minredis import Client

    c = Client(port=PORT, password="pw-test")
    c.execute("FLUSHALL")
    yield c
    c.close()


def test_utf8_values_round_trip(client):
    assert client.set("greeting", "héllo wörld ✓") == "OK"
    assert client.get("greeting") == "héllo wörld ✓"
    client.set("bin", b"\x00\r\n\xc3\xa9")
    assert client.execute("STRLEN", "bin") == 5
    assert client.execute("PING") == "PONG"


def test_large_values_are_read_completely(client):
    big = "abcdefghij\r\n" * 50000
    client.set("big", big)
    assert client.get("big") == big
    client.rpush("bigl", big, "x", big)
    assert client.lrange("bigl", 0, -1) == [big, "x", big]
    assert client.get("big") == big and client.incr("after") == 1


def test_missing_values_are_none(client):
    assert client.get("missing") is None
    client.set("empty", "")
    assert client.get("empty") == ""
    assert client.execute("MGET", "empty", "missing") == ["", None]
    assert client.execute("BLPOP", "nolist", "0.05") is None


def test_integers_and_lists(client):
    assert client.incr("n") == 1 and client.incr("n") == 2
    assert client.rpush("l", "a", "b", "c") == 3
    assert client.lrange("l", 0, -1) == ["a", "b", "c"]
    assert client.lrange("nope", 0, -1) == []
    assert client.delete("l", "n", "zz") == 2
    client.hset("h", "f", "ü")
    assert client.hgetall("h") == {"f": "ü"} and client.hgetall("nohash") == {}


def test_nested_arrays(client):
    client.execute("XADD", "s", "1-1", "field", "välue")
    assert client.execute("XRANGE", "s", "-", "+") == [["1-1", ["field", "välue"]]]


def test_errors_raise(client):
    from minredis import ReplyError

    client.set("word", "abc")
    with pytest.raises(ReplyError, match="not an integer"):
        client.incr("word")
    assert client.get("word") == "abc"
    with pytest.raises(ReplyError):
        client.execute("NOSUCHCOMMAND")
    assert client.execute("PING") == "PONG"


def test_a_wrong_password_raises(server):
    from minredis import Client, ReplyError

    with pytest.raises(ReplyError):
        Client(port=PORT, password="wrong")
