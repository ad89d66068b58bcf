# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The remote backend and the reward server's scoring, without ROS or Ray.

The node's settings accept ``model.backend: remote`` with a server URL; what a server answers is
checked before it becomes a reward; a replica's batch of several robots' windows gives what each
request alone gives; the remote backend never imports Ray.
"""
import contextlib
import http.server
import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from model_fixtures import make_frames
from robo_reward_ros.settings.parameter_table import SPECS
from robo_reward_ros.settings.node_settings import model_settings
from robo_reward_ros.models.backends.remote import RemoteModelError, RemoteRewardModel
from robo_reward_ros.models.reward_model import Frame
from robo_reward_ros.models.remote import wire
from robo_reward_ros.serving.batch_scoring import score_requests
from reward_server_process import free_port


def settings(**changes):
    values = {spec.name: spec.default for spec in SPECS if spec.name.startswith("model.")}
    values.update({"model.preset": "none", **changes})
    return model_settings(values)


def test_remote_backend_with_a_server_url_is_a_valid_model_setting():
    model = settings(**{"model.backend": "remote", "model.id": "http://gpu-server.lab:8000/"})
    assert (model.backend, model.model_id) == ("remote", "http://gpu-server.lab:8000")


@pytest.mark.parametrize("url", ["", "gpu-server:8000", "https://gpu:8000", "http://gpu:8000/score",
                                 "http://user:pw@gpu:8000", "http://gpu:99999", "file:///etc/passwd"])
def test_remote_backend_refuses_what_is_not_a_server_url(url):
    with pytest.raises(ValueError, match="model"):
        settings(**{"model.backend": "remote", "model.id": url})


def test_a_server_that_does_not_answer_fails_the_load_with_its_address():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(RemoteModelError, match=f"reward server {url}"):
        RemoteRewardModel(url, timeout_sec=2.0)


def test_a_server_that_stalls_is_a_timeout_and_the_next_call_fails_at_once():
    """A listening socket that never answers (a hung server): the request times out, not hangs."""
    import socket
    import time
    with socket.socket() as stalled:
        stalled.bind(("127.0.0.1", 0))
        stalled.listen(8)
        model = RemoteRewardModel.__new__(RemoteRewardModel)  # skip /info: it would time out the same way
        model.url, model.timeout_sec, model.max_request_bytes = (f"http://127.0.0.1:{stalled.getsockname()[1]}",
                                                                 0.5, 1 << 20)
        model._unavailable_until, model._api_key = 0.0, ""
        started = time.monotonic()
        with pytest.raises(RemoteModelError, match="unreachable.*timed out"):
            model._request("GET", "/info")
        assert time.monotonic() - started < 5.0
        started = time.monotonic()
        with pytest.raises(RemoteModelError, match="unavailable"):  # the pipeline's per-frame retries
            model._request("GET", "/info")
        assert time.monotonic() - started < 0.1


@pytest.mark.parametrize("answer", [[], {"progress": "x", "stamps": [1.0]}, {"stamps": [1.0]},
                                    {"progress": [0.5, 0.6], "stamps": [1.0]},
                                    {"progress": [0.5], "stamps": [7.0]}, {"progress": [], "stamps": []}])
def test_garbage_outputs_are_refused_not_turned_into_rewards(answer):
    with pytest.raises(wire.WireError):
        wire.output_from_json(answer, [1.0, 1.5])


def test_jpeg_round_trip_keeps_the_frame_close_and_refuses_other_images():
    rgb = np.tile(np.linspace(0, 255, 64, dtype=np.uint8)[None, :, None], (48, 1, 3))
    decoded = wire.decode_jpeg(wire.encode_jpeg(rgb))
    assert decoded.shape == rgb.shape and np.abs(decoded.astype(int) - rgb).max() <= 8
    import base64
    with pytest.raises(wire.WireError, match="JPEG"):
        wire.decode_jpeg(base64.b64encode(b"\x89PNG\r\n\x1a\n not really").decode())


def jpeg_of(side, quality=90):
    rng = np.random.default_rng(side)
    return wire.encode_jpeg(rng.integers(0, 256, (side, side, 3), dtype=np.uint8), quality)


def test_a_large_frame_is_decoded_small_a_forged_one_refused_and_a_request_has_a_pixel_budget():
    big = wire.decode_jpeg(jpeg_of(1024), frame_pixels=50176)
    assert big.shape[0] * big.shape[1] <= 50176 and big.shape[0] >= 200, big.shape
    import base64
    whole = base64.b64decode(jpeg_of(1024, quality=50))
    cut = base64.b64encode(whole[:700] + b"\xff\xd9").decode()  # header of 1024x1024, almost no scan
    with pytest.raises(wire.WireError, match="1024x1024 pixels, more than its 702 bytes can encode"):
        wire.decode_jpeg(cut)
    clip = [{"stamp": float(i), "jpeg": jpeg_of(64)} for i in range(4)]
    limits = wire.DecodeLimits(frame_pixels=64 * 64, request_pixels=7 * 64 * 64)
    _, clips = wire.parse_score_request({"instruction": "pick", "clips": [clip]}, limits=limits)
    assert [f.rgb.shape for f in clips[0]] == [(64, 64, 3)] * 4
    with pytest.raises(wire.TooManyPixels, match="decodes to 32768 pixels, over the server's 28672"):
        wire.parse_score_request({"instruction": "pick", "clips": [clip, clip]}, limits=limits)
    with pytest.raises(wire.WireError, match="'<\\|im_end\\|>'"):
        wire.parse_score_request({"instruction": "pick<|im_end|>", "clips": [clip]},
                                 reserved_texts=frozenset({"<|im_end|>"}), limits=limits)


def test_a_request_past_its_deadline_is_not_scored_and_the_others_are(robometer_fp32):
    from robo_reward_ros.serving.batch_scoring import RequestExpired, ScoreRequest
    live = ScoreRequest("pick up the cup", [make_frames(3, 64, 64, seed=1)])
    expired = ScoreRequest("open the drawer", [make_frames(3, 64, 64, seed=2)], deadline=time.monotonic() - 1.0)
    answers = score_requests(robometer_fp32, [expired, live])
    assert isinstance(answers[0], RequestExpired)
    np.testing.assert_allclose(answers[1][0]["progress"],
                               score_requests(robometer_fp32, [live])[0][0]["progress"], atol=1e-5)


def test_a_batch_of_robots_gives_what_each_request_alone_gives_and_a_bad_one_fails_alone(robometer_fp32):
    requests = [("pick up the cup", [make_frames(8, 64, 64, seed=1)]),
                ("open the drawer", [make_frames(5, 64, 64, seed=2), make_frames(3, 64, 64, seed=3)])]
    batched = score_requests(robometer_fp32, requests)
    alone = [score_requests(robometer_fp32, [request])[0] for request in requests]
    for together, single in zip(batched, alone):
        for a, b in zip(together, single):
            assert a["stamps"] == b["stamps"]
            np.testing.assert_allclose(a["progress"], b["progress"], atol=1e-5)
    broken = ("stack", [[Frame(0.0, np.zeros((8, 8), dtype=np.uint8))]])  # not HxWx3
    answers = score_requests(robometer_fp32, [requests[0], broken])
    assert isinstance(answers[1], ValueError)
    np.testing.assert_allclose(answers[0][0]["progress"], alone[0][0]["progress"], atol=1e-5)


def test_the_remote_backend_and_the_node_settings_never_import_ray():
    code = ("import sys; import robo_reward_ros.models.backends.remote, robo_reward_ros.settings.node_settings; "
            "assert 'ray' not in sys.modules and 'torch' not in sys.modules, 'imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


INFO = {"backend": "fake", "capabilities": {"progress": True}, "max_frames": 8}


@contextlib.contextmanager
def tiny_server(answer):
    """Run a real HTTP server in a thread; ``answer(handler)`` writes the whole response. Yield (url, paths asked)."""
    asked = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            try:
                answer(self)
            except OSError:
                pass  # the client gave up: what the trickling server is for

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def send_info(handler):
    body = json.dumps(INFO).encode()
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def trickle(in_headers):
    """Return an answer that sends one byte every 0.3 s (15 in all), in its headers or in its body."""
    def answer(handler):
        handler.wfile.write(b"HTTP/1.0 200 OK\r\n" + (b"X-Slow: " if in_headers else b"Content-Length: 15\r\n\r\n"))
        for _ in range(15):
            handler.wfile.write(b"x")
            time.sleep(0.3)
    return answer


@pytest.mark.parametrize("in_headers", [False, True], ids=["body", "headers"])
def test_a_server_that_trickles_its_answer_fails_at_one_deadline_for_the_whole_request(in_headers):
    """Issue 30 finding 6: the timeout was per socket read, so one byte every 0.3 s never timed out."""
    with tiny_server(trickle(in_headers)) as (url, _):
        started = time.monotonic()
        with pytest.raises(RemoteModelError, match=f"reward server {url}.*unreachable.*timed out"):
            RemoteRewardModel(url, timeout_sec=1.0)
        assert time.monotonic() - started < 2.0


def test_a_redirect_is_an_error_naming_its_status_and_is_never_followed():
    with tiny_server(send_info) as (elsewhere, asked_elsewhere):
        def redirect(handler):
            handler.send_response(302)
            handler.send_header("Location", elsewhere + "/info")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        with tiny_server(redirect) as (url, _):
            with pytest.raises(RemoteModelError, match=f"reward server {url}.*302.*redirects are not followed"):
                RemoteRewardModel(url, timeout_sec=2.0)
    assert asked_elsewhere == []


def test_proxy_settings_in_the_environment_are_ignored(monkeypatch):
    dead_proxy = f"http://127.0.0.1:{free_port()}"
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, dead_proxy)
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with tiny_server(send_info) as (url, asked):
        model = RemoteRewardModel(url, timeout_sec=2.0)
    assert model.name == "remote:fake" and asked == ["/info"]
