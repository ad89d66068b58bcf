"""`robo-reward serve`: one reward backend on Ray Serve, shared by several robots over HTTP.

Robots set ``model.backend: remote`` and ``model.id: http://HOST:PORT``. Binds 127.0.0.1 unless
told otherwise (docs/security.md). Stops on Ctrl-C or SIGTERM.
"""
from __future__ import annotations

import argparse
import signal
import socket
import sys
import threading
from typing import Optional, Sequence

from robo_reward_ros.models.loading.choices import check_device, check_model_reference, check_precision
from robo_reward_ros.serving import wire


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
    p.add_argument("--replicas", type=int, default=1, help="model copies (each takes one GPU with a cuda device)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs for the local Ray runtime (default: all)")
    return p


def check_before_ray(args: argparse.Namespace, plugins: Sequence[str]) -> None:
    """Refuse in a second what a replica would otherwise fail on after Ray's start-up and retries.

    The backend's name, the checkpoint's config.json (a hub id: one quick probe), the port.
    """
    from robo_reward_ros.models.loading import checkpoint_layout
    from robo_reward_ros.models.loading.backend_registry import import_plugins, registered_backends
    from robo_reward_ros.models.loading.loader import BACKENDS
    import_plugins(plugins)
    known = [b for b in BACKENDS if b != "remote"] + list(registered_backends())
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    plugins = [m.strip() for m in args.plugin_modules.split(",") if m.strip()]
    try:
        check_precision(args.precision)
        check_device(args.device)
        if args.backend == "remote":
            raise ValueError("--backend remote would only forward to another server; host a model here")
        if args.backend in ("auto", "robometer", "roboreward", "topreward"):
            check_model_reference(args.model)
        if not 0 < args.port < 65536 or args.max_batch < 1 or args.batch_wait_ms < 0 or args.replicas < 1:
            raise ValueError("--port in 1..65535, --max-batch >= 1, --batch-wait-ms >= 0, --replicas >= 1")
        check_before_ray(args, plugins)
    except (ValueError, OSError, RuntimeError, ImportError) as exc:
        print(f"robo-reward serve: {exc}", file=sys.stderr)
        return 2
    import ray
    from ray import serve

    from robo_reward_ros.serving.deployment import RewardServer

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    # "local": a runtime of its own, never a cluster some other tool started on this machine.
    ray.init(address="local", include_dashboard=False, num_cpus=args.num_cpus, log_to_driver=True)
    try:
        serve.start(http_options={"host": args.host, "port": args.port})
        gpus = 1 if args.device.startswith("cuda") else 0
        app = RewardServer.options(
            num_replicas=args.replicas, max_ongoing_requests=max(16, 2 * args.max_batch),
            ray_actor_options={"num_gpus": gpus, "num_cpus": 0},
        ).bind(args.backend, args.model, args.precision, args.device, plugins,
               int(args.max_request_mb * 2 ** 20), args.max_batch, args.batch_wait_ms / 1000.0)
        try:
            serve.run(app, name="robo-reward", route_prefix="/")
        except RuntimeError as exc:  # the replica could not load the model: its log above says why
            print(f"robo-reward serve: the model did not load: {exc}", file=sys.stderr)
            return 1
        print(f"robo-reward serve: {args.backend} {args.model} ({args.precision}, {args.device}) on "
              f"http://{args.host}:{args.port} (max batch {args.max_batch})", flush=True)
        stop.wait()
    finally:
        serve.shutdown()
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
