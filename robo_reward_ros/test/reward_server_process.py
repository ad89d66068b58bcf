# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""`robo-reward serve` as a child process for the tests: started, waited for, killed like a crash."""
import json
import os
import random
import socket
import sys
import time
import urllib.error
import urllib.request
from typing import List

from ros_fixtures import SCRIPTED_ENV, RosProcess

SERVER_START_TIMEOUT_SEC = 120.0


def _ephemeral_ports() -> range:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            low, high = (int(word) for word in handle.read().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


# Ray's workers take ports 10002-19999 (its default min/max_worker_port): above them.
_SERVER_PORTS = range(20000, 32768)


def free_port() -> int:
    """Return a free port that no outgoing connection and no Ray worker can take before the server binds it.

    A port the kernel picked (bind to 0) is an ephemeral one: between the probe's close and the
    server's bind, any connection (Ray opens hundreds while Serve starts) may get it as its local
    port, and the proxy then fails with "Address already in use" (seen in a fresh-clone run).
    """
    ephemeral = _ephemeral_ports()
    candidates = [port for port in _SERVER_PORTS if port not in ephemeral]
    for port in random.sample(candidates, min(len(candidates), 200)):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {_SERVER_PORTS.start}-{_SERVER_PORTS.stop - 1} outside the ephemeral range")


def serve_argv(model_dir: str, port: int, *extra: str, backend: str = "robometer") -> List[str]:
    return [sys.executable, "-m", "robo_reward_ros.cli.main", "serve", "--backend", backend,
            "--model", model_dir, "--precision", "fp32", "--device", "cpu", "--port", str(port),
            "--num-cpus", "1", *extra]


def server_info(url: str, timeout: float = 2.0, api_key: str = ""):
    """Return the server's /info, or None while it does not answer."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url + "/info", headers=headers),
                                    timeout=timeout) as response:
            return json.loads(response.read())
    except (OSError, ValueError):
        return None


class RewardServerProcess:
    """``backend="pixel_scripted"`` serves the test's scripted backend (scripted_backend.py) as a plugin."""

    def __init__(self, model_dir: str, log_dir: str, port: int = 0, extra_args=(), backend: str = "robometer",
                 api_key: str = "") -> None:
        self.model_dir, self.log_dir, self.extra_args = model_dir, log_dir, tuple(extra_args)
        self.backend, self.api_key = backend, api_key
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.starts = 0
        self.process = None

    def start(self) -> None:
        """Start and wait until /info answers (the replica has loaded the model)."""
        self.starts += 1
        log = os.path.join(self.log_dir, f"serve-{self.port}-{self.starts}.log")
        extra = self.extra_args
        if self.backend == "pixel_scripted":
            extra += ("--plugin-modules", "scripted_backend")
        self.process = RosProcess(serve_argv(self.model_dir, self.port, *extra, backend=self.backend), log,
                                  env=SCRIPTED_ENV if self.backend == "pixel_scripted" else None)
        deadline = time.monotonic() + SERVER_START_TIMEOUT_SEC
        while server_info(self.url, api_key=self.api_key) is None:
            if self.process.popen.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"robo-reward serve did not come up:\n{self.process.output()}")
            time.sleep(0.2)  # polling the port: the server answers when it is ready

    def kill(self) -> None:
        """SIGKILL to the server's process group (a crash); waits until the port is closed."""
        self.process.kill()
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) != 0:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"port {self.port} still open 30 s after the server was killed")
