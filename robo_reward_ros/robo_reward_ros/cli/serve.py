# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""`robo-reward serve`: one reward backend on Ray Serve, shared by several robots over HTTP.

Robots set ``model.backend: remote`` and ``model.id: http://HOST:PORT``. Binds 127.0.0.1 unless
told otherwise; beyond loopback only with an API key; Ray's own ports only with Ray's token
(docs/security.md). Stops on Ctrl-C or SIGTERM.
"""
from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from robo_reward_ros.cli import module_list
from robo_reward_ros.models.loading.choices import check_device, check_model_reference, check_precision
from robo_reward_ros.models.remote import wire
from robo_reward_ros.models.remote.api_key import KEY_ENV, KEY_FILE_ENV, read_api_key

MAX_ONGOING_REQUESTS = 64


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="robo-reward serve", description=__doc__.splitlines()[0])
    p.add_argument("--backend", required=True,
                   help="robometer, roboreward, topreward, or a plugin backend registered by --plugin-modules")
    p.add_argument("--model", required=True, help="model id or local checkpoint directory")
    p.add_argument("--precision", default="bf16", help="fp32, bf16, fp16, nf4, int8, int8wo, int4wo")
    p.add_argument("--device", default="auto", help="auto, cuda, cuda:N or cpu")
    p.add_argument("--plugin-modules", default="", help="comma-separated modules that register backends")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1; 0.0.0.0 only behind the robot network's firewall)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-batch", type=int, default=8, help="requests put into one forward at most (1: no batching)")
    p.add_argument("--batch-wait-ms", type=float, default=5.0,
                   help="how long a request waits for others to join its batch")
    p.add_argument("--max-request-mb", type=float, default=wire.DEFAULT_MAX_REQUEST_BYTES / 2 ** 20,
                   help="larger request bodies are refused (413)")
    p.add_argument("--max-frame-pixels", type=int, default=wire.DEFAULT_MAX_FRAME_PIXELS,
                   help="frames are decoded to at most this many pixels (default: the node's cameras.max_pixels)")
    p.add_argument("--max-request-pixels", type=int, default=wire.DEFAULT_MAX_REQUEST_PIXELS,
                   help="a request that decodes to more pixels is refused (413)")
    p.add_argument("--read-timeout-s", type=float, default=10.0,
                   help="a request body not received within this is refused (408)")
    p.add_argument("--request-timeout-s", type=float, default=30.0,
                   help="a request not answered within this fails, and is not scored once it has waited so long")
    p.add_argument("--api-key-file", default="",
                   help=f"file (mode 600) with the key robots must send; default ${KEY_FILE_ENV} or ${KEY_ENV}")
    p.add_argument("--no-api-key", action="store_true",
                   help="serve a non-loopback --host without an API key (anyone who reaches the port may score)")
    p.add_argument("--allow-ray-without-auth", action="store_true",
                   help="start even if RAY_AUTH_MODE switches Ray's token off (Ray's ports then take any caller)")
    p.add_argument("--replicas", type=int, default=1, help="model copies (each takes one GPU with a cuda device)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs for the local Ray runtime (default: all)")
    return p


def check_before_ray(args: argparse.Namespace, plugins: Sequence[str]) -> None:
    """Refuse in a second what a replica would otherwise fail on after Ray's start-up and retries.

    The backend's name, the checkpoint's config.json (a hub id: one quick probe), the port.
    """
    from robo_reward_ros.models.loading import checkpoint_layout
    from robo_reward_ros.models.loading.backend_registry import backend_names, import_plugins
    from robo_reward_ros.models.loading.choices import BACKENDS
    import_plugins(plugins)
    known = [b for b in backend_names() if b != "remote"]
    if args.backend not in known:
        raise ValueError(f"unknown backend '{args.backend}' (known: {', '.join(known)}; a plugin "
                         f"backend needs --plugin-modules)")
    if args.backend in BACKENDS:
        checkpoint_layout.load_config_json(args.model)
    with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as probe:
        # As the server binds (SO_REUSEADDR): a port in TIME_WAIT after a restart is free, one
        # with a listener is not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((args.host, args.port))
        except OSError as exc:
            raise OSError(f"cannot listen on {args.host}:{args.port}: {exc.strerror} (another "
                          f"server there? choose --port)") from None


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def ray_auth_mode() -> str:
    """Ray's auth mode as the environment sets it; Ray 2.60's default is token."""
    return os.environ.get("RAY_AUTH_MODE", "token").strip().lower()


def check_access(args: argparse.Namespace) -> str:
    """Return the API key to require ('' for none); refuse an open port beyond loopback and Ray without its token."""
    api_key = read_api_key(args.api_key_file or None)
    if not api_key and not is_loopback(args.host) and not args.no_api_key:
        raise ValueError(f"--host {args.host} reaches beyond this machine: give the robots' key with "
                         f"--api-key-file (or ${KEY_FILE_ENV}), or say --no-api-key")
    mode = ray_auth_mode()
    if mode != "token" and not args.allow_ray_without_auth:
        raise ValueError(f"RAY_AUTH_MODE={mode} switches off the token that guards Ray's own ports (they listen "
                         "on every interface): unset it, or say --allow-ray-without-auth")
    return api_key


def prepare_ray_token() -> None:
    """Ray's token mode, with its default token file readable by this user alone (Ray writes it 644)."""
    if ray_auth_mode() != "token":
        return
    os.environ["RAY_AUTH_MODE"] = "token"
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return
    path = Path.home() / ".ray" / "auth_token"
    path.parent.mkdir(mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        if path.is_symlink():
            raise ValueError(f"{path} is a symbolic link: Ray's token must be a file of its own") from None
        os.chmod(path, 0o600)
        return
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_hex(32))


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    plugins = module_list(args.plugin_modules)
    try:
        check_precision(args.precision)
        check_device(args.device)
        if args.backend == "remote":
            raise ValueError("--backend remote would only forward to another server; host a model here")
        if args.backend in ("auto", "robometer", "roboreward", "topreward"):
            check_model_reference(args.model)
        if not 0 < args.port < 65536 or args.max_batch < 1 or args.batch_wait_ms < 0 or args.replicas < 1:
            raise ValueError("--port in 1..65535, --max-batch >= 1, --batch-wait-ms >= 0, --replicas >= 1")
        if not 1024 <= args.max_frame_pixels <= wire.MAX_PIXELS_PER_FRAME or args.max_request_pixels < \
                args.max_frame_pixels:
            raise ValueError(f"--max-frame-pixels in 1024..{wire.MAX_PIXELS_PER_FRAME}, --max-request-pixels at "
                             "least one frame's")
        if not args.read_timeout_s > 0 or not args.request_timeout_s > 0:
            raise ValueError("--read-timeout-s and --request-timeout-s must be > 0")
        api_key = check_access(args)
        check_before_ray(args, plugins)
        prepare_ray_token()
    except (ValueError, OSError, RuntimeError, ImportError) as exc:
        print(f"robo-reward serve: {exc}", file=sys.stderr)
        return 2
    import ray
    from ray import serve

    from robo_reward_ros.serving.deployment import RewardServer

    # A list, not an Event: a burst of signals runs the handler inside itself, and Event.set()
    # re-entered that way waits forever on its own lock (node/runner.py has the same rule).
    stopped = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda signum, _frame: stopped.append(signum))
    # "local": a runtime of its own, never a cluster some other tool started on this machine.
    ray.init(address="local", include_dashboard=False, num_cpus=args.num_cpus, log_to_driver=True)
    try:
        serve.start(http_options={"host": args.host, "port": args.port,
                                  "request_timeout_s": args.request_timeout_s})
        gpus = 1 if args.device.startswith("cuda") else 0
        # Many slots: a request waiting for its body holds one, so a few slow clients must not fill them.
        app = RewardServer.options(
            num_replicas=args.replicas, max_ongoing_requests=max(MAX_ONGOING_REQUESTS, 2 * args.max_batch),
            ray_actor_options={"num_gpus": gpus, "num_cpus": 0},
        ).bind(args.backend, args.model, args.precision, args.device, plugins,
               int(args.max_request_mb * 2 ** 20), args.max_batch, args.batch_wait_ms / 1000.0,
               wire.DecodeLimits(args.max_frame_pixels, args.max_request_pixels), args.read_timeout_s,
               args.request_timeout_s, api_key)
        try:
            serve.run(app, name="robo-reward", route_prefix="/")
        except RuntimeError as exc:  # the replica could not load the model: its log above says why
            print(f"robo-reward serve: the model did not load: {exc}", file=sys.stderr)
            return 1
        print(f"robo-reward serve: {args.backend} {args.model} ({args.precision}, {args.device}) on "
              f"http://{args.host}:{args.port} (max batch {args.max_batch}; "
              f"{'API key required' if api_key else 'no API key'})", flush=True)
        while not stopped:
            time.sleep(0.2)
    finally:
        serve.shutdown()
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
