# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Test session set-up: isolate ROS traffic and logs, and import the package from source.

Every session gets its own ROS_DOMAIN_ID and keeps discovery on this machine, so parallel or
repeated runs (and a robot on the same network) never see each other's topics.
"""
import os
import sys
import tempfile

_SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _SOURCE not in sys.path:
    sys.path.insert(0, _SOURCE)
_TEST_DIR = os.path.dirname(os.path.abspath(__file__))
if _TEST_DIR not in sys.path:
    sys.path.insert(0, _TEST_DIR)

from fastdds_profiles import fastdds_profile_variable  # noqa: E402 (needs the paths above)

# Set before any rclpy.init(), in this process and (by inheritance) in every child process.
# pytest-xdist: the controller imports this file before it starts its workers, which inherit the
# base; each worker takes the next free domain above it, so workers never see each other's nodes.
_DOMAINS_PER_SESSION = 9  # the controller and up to 8 workers
_SESSION_SLOTS = 25  # domain ids 1..225: below Fast DDS's limit of 232
_HELD_SLOT = []  # the claimed slot's lock file, open for the session's life


def _claim_domain_base() -> int:
    """Return the first domain of a slot no other test session on this machine holds.

    The slot is an exclusive flock, released when the controller exits (however it exits). A base
    taken from the process id alone let two sessions started together share domains 1 time in 25:
    the other session's nodes then answered this one's clients.
    """
    import fcntl
    folder = os.path.join(tempfile.gettempdir(), "robo_reward_test_domains")
    os.makedirs(folder, exist_ok=True)
    first = os.getpid() % _SESSION_SLOTS
    for offset in range(_SESSION_SLOTS):
        slot = (first + offset) % _SESSION_SLOTS
        handle = open(os.path.join(folder, f"slot-{slot}.lock"), "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        _HELD_SLOT.append(handle)
        return 1 + slot * _DOMAINS_PER_SESSION
    return 1 + first * _DOMAINS_PER_SESSION  # 25 sessions at once: share, as before


if "ROBO_REWARD_TEST_DOMAIN_BASE" not in os.environ:
    os.environ["ROBO_REWARD_TEST_DOMAIN_BASE"] = str(_claim_domain_base())
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ...; empty without xdist
os.environ["ROS_DOMAIN_ID"] = str(int(os.environ["ROBO_REWARD_TEST_DOMAIN_BASE"])
                                  + (1 + int(_WORKER[2:]) if _WORKER else 0))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_LOCALHOST_ONLY", None)
os.environ["ROS_LOG_DIR"] = tempfile.mkdtemp(prefix="robo_reward_test_roslog_")
os.environ.setdefault("RCUTILS_LOGGING_BUFFERED_STREAM", "0")
# Service replies wait for a new client's reader instead of being dropped after 100 ms: the
# installed profile users are told to set, under the one name their Fast DDS reads (see
# fastdds_profile_variable; on Kilted the old name makes every process print a deprecation warning).
_REPLIES_PROFILE = os.path.join(_SOURCE, "config", "fastdds_service_replies.xml")
os.environ.setdefault(fastdds_profile_variable(), _REPLIES_PROFILE)
# MuJoCo picks its GL backend at first import: offscreen EGL (Mesa) for every test module.
os.environ.setdefault("MUJOCO_GL", "egl")
# A child process that crashes in native code (rclpy, torch) prints every thread's Python stack
# into its log, which a failing test shows: the evidence for a crash seen once.
os.environ.setdefault("PYTHONFAULTHANDLER", "1")
# One torch (OpenMP) thread per process: the suite runs a process per core (xdist workers) plus
# the nodes they start, and torch's default of a thread per core made each spin for the others'
# cores. Ray's workers get one thread too (Ray sets OMP_NUM_THREADS=1 for them).
os.environ.setdefault("OMP_NUM_THREADS", "1")
# No model hub here: a model id must fail at once, never wait on the network.
os.environ["HF_HUB_OFFLINE"] = "1"

pytest_plugins = ["ros_fixtures", "model_fixtures", "hang_reports", "leaked_processes"]


# The test files that take longest (30-150 s each on 2 cores: `--durations=0`, summed per file)
# run first, longest first: with a file at a time per xdist worker (scripts/run_tests.sh), a long
# file started last would keep one worker busy alone.
LONGEST_FIRST = ("test_ray_replay.py", "test_reward_node_faults.py", "test_finetune.py",
                 "test_reward_server.py", "test_reward_node_lifecycle.py", "test_models_torchao.py",
                 "test_demo.py", "test_gym_env.py", "test_soak_short.py", "test_reward_steps.py",
                 "test_offline_model_choice.py", "test_models_precision.py",
                 "test_reward_node_input_guards.py", "test_live_replay.py",
                 "test_score_pair_consistency.py")


def pytest_collection_modifyitems(config, items):
    """Order the files longest first, keeping each file's own order (every worker sorts alike)."""
    def rank(item):
        name = os.path.basename(str(item.fspath))
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
    items.sort(key=rank)
