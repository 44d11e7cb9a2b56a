"""The verifier's wire: one frame format on every link, typed messages between Verifier and runner."""

import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_lab.verifier import wire
from rlvr_lab.verifier.proxy import server as sandbox_server
from rlvr_lab.verifier.schema import TrialResult

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_both_sides_of_the_sandbox_link_write_the_same_frame(message):
    read_fd, write_fd = os.pipe()
    try:
        sandbox_server.write_frame(write_fd, message, threading.Lock())
        os.close(write_fd)
        written = b""
        while chunk := os.read(read_fd, 1 << 16):
            written += chunk
    finally:
        os.close(read_fd)
    assert written == wire.json_frame(message)


def test_json_frame_limit():
    with pytest.raises(ValueError, match="exceeds the 10-byte limit"):
        wire.json_frame("x" * 20, limit=10)
    assert len(wire.json_frame("x" * 20, limit=None)) == 4 + 22


def test_messages_round_trip_and_a_cut_stream_is_an_eof():
    read_fd, write_fd = os.pipe()
    reply = wire.VerifyReply("fail", (TrialResult("fail", 0.01, 3, "test failed", "E assert 1 == 2"),), "rejected")
    wire.send_message(write_fd, reply)
    wire.send_message(write_fd, wire.RunnerFailed("value", "k must be >= 1"))
    assert wire.recv_message(read_fd) == reply
    assert wire.recv_message(read_fd) == wire.RunnerFailed("value", "k must be >= 1")
    wire.write_all(write_fd, wire.HEADER.pack(100) + b"only part")
    os.close(write_fd)
    with pytest.raises(EOFError):
        wire.recv_message(read_fd)
    os.close(read_fd)
    assert wire.pending("lost") == wire.VerifyReply("pending", (), "lost")


def test_the_interface_module_imports_no_backend():
    """backend.py is the interface: it names no backend and no factory (their imports point at it)."""
    import ast
    from pathlib import Path

    from rlvr_lab.sandbox import backend

    tree = ast.parse(Path(backend.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert not imported & {"rlvr_lab.sandbox.local", "rlvr_lab.sandbox.docker", "rlvr_lab.sandbox.factory"}, imported
    assert not any(name.startswith("rlvr_lab") for name in imported), imported
