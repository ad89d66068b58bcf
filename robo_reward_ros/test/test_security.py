"""Security rules of the project, checked on the code and on the running node."""
import ast
import glob
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest
from rclpy._rclpy_pybind11 import NodeNameNonExistentError

from robo_reward_ros.models.loading.choices import check_model_reference
from ros_fixtures import PACKAGE_ROOT, SCRIPTED_ENV, reward_node_argv, spin_until

REPO = os.path.dirname(PACKAGE_ROOT)
SOURCES = sorted(glob.glob(os.path.join(PACKAGE_ROOT, "robo_reward_ros", "**", "*.py"),
                           recursive=True) + glob.glob(os.path.join(REPO, "bench", "*.py")))


def _calls(path):
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _name(func):
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: os.path.relpath(p, REPO))
def test_no_remote_code_no_shell_no_pickle(path):
    for call in _calls(path):
        name = _name(call.func)
        keywords = {k.arg: k.value for k in call.keywords}
        remote = keywords.get("trust_remote_code")
        assert not (isinstance(remote, ast.Constant) and remote.value is True), \
            f"{path}:{call.lineno} trust_remote_code=True"
        assert remote is None or isinstance(remote, ast.Constant), \
            f"{path}:{call.lineno} trust_remote_code from a variable"
        shell = keywords.get("shell")
        assert not (isinstance(shell, ast.Constant) and shell.value), \
            f"{path}:{call.lineno} subprocess with shell=True"
        assert name not in ("os.system", "os.popen", "pickle.load", "pickle.loads"), \
            f"{path}:{call.lineno} {name}"
        if name == "torch.load":
            weights_only = keywords.get("weights_only")
            assert isinstance(weights_only, ast.Constant) and weights_only.value is True, \
                f"{path}:{call.lineno} torch.load without weights_only=True"


@pytest.mark.parametrize("model", ["http://example.com/model", "../../no_such_dir_here", "a/b/c",
                                   "owner/../name", "", "/no/such/dir"])
def test_model_references_other_than_a_directory_or_an_id_are_refused(model):
    with pytest.raises(ValueError, match="neither an existing directory nor a model id"):
        check_model_reference(model)


def test_directories_and_hub_ids_are_accepted(tmp_path):
    assert check_model_reference(str(tmp_path)) == "directory"
    assert check_model_reference("robometer/Robometer-4B") == "hub id"
    assert check_model_reference("Qwen/Qwen3-VL-4B-Instruct") == "hub id"


def test_sros2_policy_covers_everything_the_node_uses(ros_node, spawn):
    policy = ElementTree.parse(os.path.join(PACKAGE_ROOT, "config", "sros2_policy.xml"))
    allowed = {kind: {e.text for group in policy.iter(tag) if group.get(kind) == "ALLOW"
                      for e in group}
               for tag, kinds in (("topics", ("publish", "subscribe")),
                                  ("services", ("reply", "request")))
               for kind in kinds}
    node = spawn(reward_node_argv("reset.service:=/controller/reset"), env=SCRIPTED_ENV)

    def node_services():
        try:
            return {n for n, _ in ros_node.get_service_names_and_types_by_node("reward_node", "/")}
        except NodeNameNonExistentError:  # not discovered yet
            return set()

    spin_until(ros_node, lambda: "/reward_node/set_task" in node_services(),
               what="the node's services", processes=[node])
    used = {
        "publish": ros_node.get_publisher_names_and_types_by_node("reward_node", "/"),
        "subscribe": ros_node.get_subscriber_names_and_types_by_node("reward_node", "/"),
        "reply": ros_node.get_service_names_and_types_by_node("reward_node", "/"),
        "request": ros_node.get_client_names_and_types_by_node("reward_node", "/"),
    }
    for kind, entities in used.items():
        names = {name.lstrip("/") for name, _ in entities}
        assert names and names <= allowed[kind], (kind, names - allowed[kind])
    assert node.interrupt() == 0


def test_a_hub_id_that_is_not_here_says_why_and_how_to_run_from_a_directory():
    """Tests run with HF_HUB_OFFLINE=1 (conftest): an uncached hub id fails at once, saying so."""
    from robo_reward_ros.models import CheckpointError, load_reward_model
    with pytest.raises(CheckpointError) as error:
        load_reward_model("nobody-here/no-such-model", backend="robometer", precision="fp32",
                          device="cpu")
    message = str(error.value)
    assert "HF_HUB_OFFLINE=1" in message and "hub cache" in message
    assert "hf download nobody-here/no-such-model --local-dir DIR" in message and "model:=DIR" in message


# A closed port on this machine: connections are refused at once, as on a robot whose network
# has no route to the hub (DNS failures take the same path).
UNREACHABLE_HUB = "http://127.0.0.1:9"
HUB_LOAD = """
import sys
from robo_reward_ros.models import load_reward_model
try:
    model = load_reward_model(sys.argv[1], backend="topreward", precision="fp32", device="cpu")
except Exception as exc:
    print("FAILED", type(exc).__name__, exc)
else:
    print("LOADED", model.name)
"""


def _load_from_hub_id(model_id, hub_cache, endpoint):
    """Load a hub id in a fresh process with the network on (as a robot has it), not offline."""
    env = {**os.environ, "HF_HUB_CACHE": str(hub_cache), "HF_ENDPOINT": endpoint}
    env.pop("HF_HUB_OFFLINE")
    done = subprocess.run([sys.executable, "-c", HUB_LOAD, model_id], env=env, capture_output=True,
                          text=True, timeout=300)
    return done.stdout + done.stderr


def test_an_unreachable_hub_fails_at_once_naming_the_cause(tmp_path):
    """Before: five retries with back-off per file (about 25 s each) and "no such model or unreachable"."""
    output = _load_from_hub_id("nobody-here/no-such-model", tmp_path / "hub", UNREACHABLE_HUB)
    assert "FAILED CheckpointError" in output, output
    assert f"the model hub {UNREACHABLE_HUB} could not be reached" in output
    assert "not in this machine's hub cache" in output and "model:=DIR" in output
    assert "Retrying" not in output, output  # huggingface_hub's back-off never ran


def test_a_cached_model_loads_without_retries_when_the_hub_is_unreachable(tmp_path, tiny_qwen3vl_dir):
    """A robot with the model in its hub cache and no network: it loads from the cache, no retries."""
    commit = "0" * 40
    repo = tmp_path / "hub" / "models--some-lab--tiny-qwen3vl"
    shutil.copytree(tiny_qwen3vl_dir, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    output = _load_from_hub_id("some-lab/tiny-qwen3vl", tmp_path / "hub", UNREACHABLE_HUB)
    assert "LOADED topreward" in output, output
    assert "loading from this machine's hub cache only" in output
    assert "Retrying" not in output, output
