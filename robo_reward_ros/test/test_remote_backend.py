"""The remote backend and the reward server's scoring, without ROS or Ray.

The node's settings accept ``model.backend: remote`` with a server URL; what a server answers is
checked before it becomes a reward; a replica's batch of several robots' windows gives what each
request alone gives; the remote backend never imports Ray.
"""
import subprocess
import sys

import numpy as np
import pytest

from model_fixtures import make_frames
from robo_reward_ros.core.node_settings import SPECS, model_settings
from robo_reward_ros.models.backends.remote import RemoteModelError, RemoteRewardModel
from robo_reward_ros.models.reward_model import Frame
from robo_reward_ros.serving import wire
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
        model._unavailable_until = 0.0
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
    code = ("import sys; import robo_reward_ros.models.backends.remote, robo_reward_ros.core.node_settings; "
            "assert 'ray' not in sys.modules and 'torch' not in sys.modules, 'imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
