"""The exec agent's pure parts: framing and head+tail capture of unbounded output."""

from ptrain.sandbox import agent


def test_head_tail_keeps_short_output_whole():
    capture = agent.HeadTail(100)
    for chunk in (b"hello ", b"world"):
        capture.add(chunk)
    assert capture.value() == b"hello world"
    assert not capture.truncated


def test_head_tail_cuts_the_middle_and_says_how_much():
    capture = agent.HeadTail(10)
    data = bytes(range(256)) * 1000
    for i in range(0, len(data), 777):
        capture.add(data[i : i + 777])
    cut = len(data) - 10
    assert capture.truncated
    assert capture.total == len(data)
    assert capture.value() == data[:5] + agent.cut_marker(cut) + data[-5:]


def test_head_tail_memory_stays_bounded_for_endless_output():
    capture = agent.HeadTail(1000)
    for _ in range(10_000):
        capture.add(b"y\n" * 4096)
    assert len(capture.tail) < 2 * 1000 + 65536 + 8192
    assert capture.total == 10_000 * 8192


def test_frames_round_trip_binary_payloads():
    frame = agent.encode({"op": "write", "path": "x"}, b"\x00\xff\xfe")
    (n,) = agent.HEADER.unpack(frame[: agent.HEADER.size])
    header = agent.decode_header(frame[agent.HEADER.size : agent.HEADER.size + n])
    assert header == {"op": "write", "path": "x", "size": 3}
    assert frame[agent.HEADER.size + n :] == b"\x00\xff\xfe"
