# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The shared reward server against a hostile peer on its port (issue 30, findings 2, 3, 4, 8).

A real `robo-reward serve` (Ray Serve) hosting the test's scripted backend as a plugin, so it starts
in seconds and a painted frame decides what the model does; what is tested is the server's door:
the API key, frames that would decode to far more than they weigh, slow clients, error replies,
and what listens on which interface.
"""
import base64
import http.client
import io
import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from listening_sockets import listening_sockets
from reward_server_process import RewardServerProcess, free_port, serve_argv
from scripted_backend import FAIL_BLUE, painted

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.models.remote import wire

API_KEY = "k" * 8 + "0123456789abcdef0123456789"
READ_TIMEOUT_SEC = 2.0
MAX_REQUEST_PIXELS = 4 * wire.DEFAULT_MAX_FRAME_PIXELS
SECURITY_DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"


@pytest.fixture(scope="module")
def key_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("key") / "api_key"
    path.write_text(API_KEY + "\n")
    path.chmod(0o600)
    return str(path)


@pytest.fixture(scope="module")
def server(tmp_path_factory, key_file):
    server = RewardServerProcess("scripted", str(tmp_path_factory.mktemp("serve")), backend="pixel_scripted",
                                 api_key=API_KEY,
                                 extra_args=("--api-key-file", key_file, "--read-timeout-s", str(READ_TIMEOUT_SEC),
                                             "--max-request-pixels", str(MAX_REQUEST_PIXELS)))
    server.start()
    yield server
    server.kill()


def call(url, path, body=None, key=API_KEY, timeout=30.0):
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url + path, data=body, method="GET" if body is None else "POST",
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def score_body(frames, instruction="stack the cups"):
    return json.dumps({"instruction": instruction, "clips": [wire.encode_clip(frames)]}).encode()


def painted_frames(count, progress=0.5, blue=0, size=(48, 64)):
    return [Frame(1.0 + 0.5 * i, painted(progress, 0.2, size, blue)) for i in range(count)]


def forged_jpeg(side=4096) -> str:
    """Cut a JPEG right after its scan header and end it: the decoder fills the rest in grey."""
    buffer = io.BytesIO()
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (side, side, 3), dtype=np.uint8)).save(buffer, "JPEG", quality=50)
    data = buffer.getvalue()
    return base64.b64encode(data[:data.find(b"\xff\xda") + 20] + b"\xff\xd9").decode()


def test_the_api_key_is_required_on_every_route_and_never_logged(server, key_file, monkeypatch):
    from robo_reward_ros.models.backends.remote import RemoteModelError, RemoteRewardModel
    body = score_body(painted_frames(2))
    for path, data in (("/info", None), ("/score", body), ("/prefer", b"{}")):
        assert call(server.url, path, data, key="")[0] == 401, path
        assert call(server.url, path, data, key=API_KEY[:-1] + "x")[0] == 401, path
    status, answer = call(server.url, "/score", body)
    assert status == 200 and abs(json.loads(answer)["outputs"][0]["progress"][-1] - 0.5) < 0.01
    # The robot's side: the key comes from the environment (never a ROS parameter).
    monkeypatch.delenv("ROBO_REWARD_API_KEY", raising=False)
    monkeypatch.delenv("ROBO_REWARD_API_KEY_FILE", raising=False)
    with pytest.raises(RemoteModelError, match="401.*ROBO_REWARD_API_KEY_FILE"):
        RemoteRewardModel(server.url)
    monkeypatch.setenv("ROBO_REWARD_API_KEY_FILE", key_file)
    model = RemoteRewardModel(server.url)
    assert abs(model.score("stack the cups", painted_frames(3, progress=0.8)).progress[-1] - 0.8) < 0.01
    assert API_KEY not in server.process.output()


def test_frames_that_would_decode_to_far_more_than_they_weigh_are_refused(server):
    started = time.monotonic()
    forged = json.dumps({"instruction": "stack the cups", "clips": [[{"stamp": 1.0, "jpeg": forged_jpeg()}]]})
    assert len(forged) < 1200  # a few hundred bytes that claim 4096 x 4096 (50 MB decoded)
    status, answer = call(server.url, "/score", forged.encode())
    assert status == 400 and "truncated or forged" in answer, answer
    assert time.monotonic() - started < 5.0
    # More decoded pixels than one request may hold: refused from the headers, before decoding.
    status, answer = call(server.url, "/score", score_body(painted_frames(5, size=(224, 224))))
    assert status == 413 and f"over the server's {MAX_REQUEST_PIXELS}" in answer, answer
    # A large real frame is decoded down to the frame size and scored.
    status, answer = call(server.url, "/score", score_body(painted_frames(1, progress=0.3, size=(768, 1024))))
    assert status == 200 and abs(json.loads(answer)["outputs"][0]["progress"][-1] - 0.3) < 0.01
    info = json.loads(call(server.url, "/info")[1])
    assert (info["max_frame_pixels"], info["max_request_pixels"]) == (wire.DEFAULT_MAX_FRAME_PIXELS,
                                                                      MAX_REQUEST_PIXELS)


def slow_client(port):
    """Send a request's headers and one byte of its body, then nothing."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=30.0)
    connection.sendall(f"POST /score HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {API_KEY}\r\n"
                       "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{".encode())
    return connection


def test_slow_clients_do_not_lock_the_others_out_and_are_cut_off(server):
    slow = [slow_client(server.port) for _ in range(24)]
    try:
        started = time.monotonic()
        status, answer = call(server.url, "/score", score_body(painted_frames(2, progress=0.6)), timeout=15.0)
        assert status == 200, answer
        assert call(server.url, "/info", timeout=15.0)[0] == 200
        print(f"valid /score and /info answered in {time.monotonic() - started:.2f} s beside 24 slow clients")
        for connection in slow:  # each is answered 408 once its body is late
            assert connection.recv(64).startswith(b"HTTP/1.1 408"), "a slow client was not cut off"
        assert time.monotonic() - started < READ_TIMEOUT_SEC + 15.0
    finally:
        for connection in slow:
            connection.close()


def test_a_model_failure_is_a_500_without_its_details_and_override_headers_are_refused(server):
    status, answer = call(server.url, "/score", score_body(painted_frames(2, blue=FAIL_BLUE)))
    assert status == 500 and "CUDA" not in answer and "server's log" in answer, answer
    deadline = time.monotonic() + 10.0
    while "CUDA out of memory (scripted)" not in server.process.output() and time.monotonic() < deadline:
        time.sleep(0.1)  # the replica's log reaches the driver's output asynchronously
    assert "CUDA out of memory (scripted)" in server.process.output()
    deep = b"[" * 100000 + b"]" * 100000
    status, answer = call(server.url, "/score", deep)
    assert status == 400 and "nested too deeply" in answer, answer
    # Serve's proxy would let a client lift its timeout with this header: refused.
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("POST", "/score", body=score_body(painted_frames(1)),
                       headers={"Authorization": f"Bearer {API_KEY}", "x-request-timeout-seconds": "0"})
    response = connection.getresponse()
    assert response.status == 400 and "x-request-timeout-seconds" in response.read().decode()
    connection.close()


def documented_listeners():
    """(process, interface kind) pairs of the table in docs/security.md's 'What listens where'."""
    text = SECURITY_DOC.read_text()
    section = text.split("### What listens where", 1)[1].split("\n#", 1)[0]
    pairs = set()
    for row in re.findall(r"^\| `([^`]+)` \| ([^|]+)\|", section, flags=re.M):
        for kind in ("all interfaces", "loopback", "the node's address", "--host"):
            if kind in row[1]:
                pairs.add((row[0], kind))
    return pairs


def interface_kind(address, port, http_port, node_addresses):
    if port == http_port:
        return "--host"
    if address in ("0.0.0.0", "0000:0000:0000:0000:0000:0000:0000:0000"):
        return "all interfaces"
    if address.startswith("127.") or address == "0000:0000:0000:0000:0000:0000:0000:0001":
        return "loopback"
    assert address in node_addresses, address
    return "the node's address"


def test_what_listens_is_what_docs_security_names_and_the_ray_token_is_private(server):
    found = listening_sockets(server.process.popen.pid)
    node_addresses = {a for a, _, _ in found if a not in ("0.0.0.0",) and not a.startswith("0000") and
                      not a.startswith("127.")}
    documented = documented_listeners()
    assert documented, "docs/security.md has no 'What listens where' table"
    seen = set()
    for address, port, process in found:
        pair = (process, interface_kind(address, port, server.port, node_addresses))
        assert pair in documented, f"{process} listens on {address}:{port}, which docs/security.md does not name"
        seen.add(pair)
    http = [(a, p) for a, p, _ in found if p == server.port]
    assert http == [("127.0.0.1", server.port)], http
    print("listening:", sorted(seen))
    token = Path.home() / ".ray" / "auth_token"
    if not (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")):
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
    # Serve's proxy answers these itself, without the key: the docs say so.
    for path in ("/-/healthz", "/-/routes"):
        assert call(server.url, path, key="")[0] == 200
        assert f"`{path}`" in SECURITY_DOC.read_text()


@pytest.mark.parametrize("case", ["open host without a key", "ray auth disabled", "key file others read"])
def test_serve_refuses_an_open_port_ray_without_its_token_and_a_shared_key_file(case, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "ROBO_REWARD_API_KEY"))}
    extra = []
    if case == "open host without a key":
        extra, reason = ["--host", "0.0.0.0"], "give the robots' key with --api-key-file"
    elif case == "ray auth disabled":
        env["RAY_AUTH_MODE"] = "disabled"
        reason = "RAY_AUTH_MODE=disabled switches off the token"
    else:
        shared = tmp_path / "key"
        shared.write_text(API_KEY)
        shared.chmod(0o644)
        extra, reason = ["--api-key-file", str(shared)], f"chmod 600 {shared}"
    argv = serve_argv("scripted", free_port(), *extra, "--plugin-modules", "scripted_backend",
                      backend="pixel_scripted")
    env["PYTHONPATH"] = os.path.dirname(__file__) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and reason in done.stderr, done.stderr
    assert API_KEY not in done.stderr + done.stdout
    assert sys.executable  # the same interpreter as the tests
