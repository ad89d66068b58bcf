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
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)
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
# No model hub here: a model id must fail at once, never wait on the network.
os.environ["HF_HUB_OFFLINE"] = "1"

pytest_plugins = ["ros_fixtures", "model_fixtures"]
