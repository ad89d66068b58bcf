# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Security rules of the project, checked on the code and on the running node."""
import ast
import fnmatch
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


RULES = {"topics": ("publish", "subscribe"), "services": ("reply", "request")}


def _policy(name):
    """Parse a shipped policy, checking it has the shape ``ros2 security create_permission`` takes.

    The elements and attributes of sros2's policy.xsd (0.2.0): policy/enclaves/enclave[@path]/
    profiles/profile[@ns, @node] holding topics and services rules of ALLOW or DENY.
    """
    root = ElementTree.parse(os.path.join(PACKAGE_ROOT, "config", name)).getroot()
    assert (root.tag, root.get("version")) == ("policy", "0.2.0")
    assert [e.tag for e in root] == ["enclaves"] and len(root[0]) >= 1
    for enclave in root[0]:
        assert enclave.tag == "enclave" and enclave.get("path", "").startswith("/")
        assert [e.tag for e in enclave] == ["profiles"]
        for profile in enclave[0]:
            assert profile.tag == "profile" and profile.get("ns") and profile.get("node")
            for rule in profile:
                assert rule.tag in RULES, rule.tag
                assert rule.attrib and set(rule.attrib) <= set(RULES[rule.tag]), rule.attrib
                assert set(rule.attrib.values()) <= {"ALLOW", "DENY"}, rule.attrib
                assert len(rule) and all(e.tag == rule.tag[:-1] and e.text.strip() for e in rule)
    return root


def _allowed(policy, fully_qualified=False):
    """Map each right (publish, subscribe, reply, request) to the names the policy allows for it.

    ``fully_qualified``: names resolved against the profile's ns and node as sros2's
    permissions.xsl does (``~`` is the node's name, a relative name is in ``ns``).
    """
    def resolve(profile, name):
        if not fully_qualified or name.startswith("/"):
            return name
        ns = profile.get("ns").rstrip("/") + "/"
        return ns + profile.get("node") + name[1:] if name.startswith("~") else ns + name

    allowed = {kind: set() for kinds in RULES.values() for kind in kinds}
    for profile in policy.iter("profile"):
        for rule in profile:
            for kind, qualifier in rule.attrib.items():
                if qualifier == "ALLOW":
                    allowed[kind] |= {resolve(profile, e.text.strip()) for e in rule}
    return allowed


def _endpoints(ros_node, name, namespace="/"):
    """Return what the node ``name`` publishes, subscribes, serves and calls, as the graph shows it."""
    try:
        return {
            "publish": ros_node.get_publisher_names_and_types_by_node(name, namespace),
            "subscribe": ros_node.get_subscriber_names_and_types_by_node(name, namespace),
            "reply": ros_node.get_service_names_and_types_by_node(name, namespace),
            "request": ros_node.get_client_names_and_types_by_node(name, namespace),
        }
    except NodeNameNonExistentError:  # not discovered yet
        return {}


def test_sros2_policy_covers_everything_the_node_uses(ros_node, spawn):
    """Under use_sim_time too: rclpy's time source then subscribes to /clock (before: not allowed)."""
    allowed = _allowed(_policy("sros2_policy.xml"))
    node = spawn(reward_node_argv("reset.service:=/controller/reset", "use_sim_time:=true"),
                 env=SCRIPTED_ENV)

    def seen(kind, name):
        return name in {n for n, _ in _endpoints(ros_node, "reward_node").get(kind, ())}

    spin_until(ros_node, lambda: seen("reply", "/reward_node/set_task") and seen("subscribe", "/clock")
               and seen("reply", "/reward_node/dismiss_alert"),
               what="the node's services and its /clock subscription", processes=[node])
    used = _endpoints(ros_node, "reward_node")
    assert len(used) == 4, used
    for kind, entities in used.items():
        names = {name.lstrip("/") for name, _ in entities}
        assert names and names <= allowed[kind], (kind, names - allowed[kind])
    assert node.interrupt() == 0


def test_caller_policy_grants_what_reward_client_uses_and_no_node_control(ros_node):
    """Check the example controller enclave: RewardClient's endpoints, no node lifecycle or parameters.

    Exactly what the client uses (a simulated controller's /clock too), and none of the reward
    node's lifecycle or parameter services. Before: no caller policy shipped, and nothing said
    who may change the node's lifecycle state or set reward.success_bonus.
    """
    from rclpy.parameter import Parameter

    from robo_reward_ros.client import RewardClient
    allowed = _allowed(_policy("sros2_caller_policy.xml"), fully_qualified=True)
    client = RewardClient(context=ros_node.context)
    try:
        client.node.set_parameters([Parameter("use_sim_time", value=True)])  # a simulated controller
        name = client.node.get_name()
        spin_until(ros_node, lambda: {"/clock", "/reward_step"} <= {
            n for n, _ in _endpoints(ros_node, name).get("subscribe", ())},
            what="the client's subscriptions")
        used = {kind: {n for n, _ in entities} for kind, entities in _endpoints(ros_node, name).items()}
    finally:
        client.close()
    for kind, names in used.items():
        uncovered = {n for n in names if not any(fnmatch.fnmatchcase(n, p) for p in allowed[kind])}
        assert not uncovered, (kind, uncovered)
        unused = {p for p in allowed[kind] if not any(fnmatch.fnmatchcase(n, p) for n in names)}
        assert not unused, (kind, unused)  # no right beyond what the client uses
    assert {"/reward_node/set_task", "/reward_node/start_episode"} <= allowed["request"]
    # The node's services that only the robot's launch enclave may call: every one the node's own
    # policy lists, less those the client calls.
    node_services = {"/" + s for s in _allowed(_policy("sros2_policy.xml"))["reply"]}
    control = node_services - used["request"]
    assert {"/reward_node/change_state", "/reward_node/set_parameters"} <= control
    granted = {s for s in control for p in allowed["request"] | allowed["reply"]
               if fnmatch.fnmatchcase(s, p)}
    assert not granted, granted


def test_only_the_console_policy_may_judge_and_it_covers_what_a_judging_client_uses(ros_node):
    """Verdicts, takeovers, reset-done and dismissals: the console enclave's, never the controller's."""
    from robo_reward_ros.client import RewardClient, RewardNodeError
    console = _allowed(_policy("sros2_console_policy.xml"), fully_qualified=True)
    controller = _allowed(_policy("sros2_caller_policy.xml"), fully_qualified=True)
    judging = {"/reward_node/submit_verdict", "/reward_node/set_intervention",
               "/reward_node/report_reset_done", "/reward_node/dismiss_alert"}
    assert judging <= console["request"] and not judging & controller["request"]
    client = RewardClient(context=ros_node.context)
    try:
        for call in (lambda: client.submit_verdict("success", "alice", timeout_sec=0.1),
                     lambda: client.set_intervention(True, "alice", timeout_sec=0.1),
                     lambda: client.report_reset_done("alice", timeout_sec=0.1),
                     lambda: client.dismiss_alert("alice", timeout_sec=0.1)):
            with pytest.raises(RewardNodeError, match="no reward node answers"):
                call()  # no node here: the client is made, which is what the graph shows
        name = client.node.get_name()
        spin_until(ros_node, lambda: judging <= {
            n for n, _ in _endpoints(ros_node, name).get("request", ())}, what="the client's operator calls")
        used = {kind: {n for n, _ in entities} for kind, entities in _endpoints(ros_node, name).items()}
    finally:
        client.close()
    for kind, names in used.items():
        uncovered = {n for n in names if not any(fnmatch.fnmatchcase(n, p) for p in console[kind])}
        assert not uncovered, (kind, uncovered)
    tasks = {"/reward_node/set_task", "/reward_node/start_episode", "/reward_node/query_progress"}
    control = {"/" + s for s in _allowed(_policy("sros2_policy.xml"))["reply"]} - judging - tasks
    assert {"/reward_node/change_state", "/reward_node/set_parameters"} <= control
    assert not {s for s in control for p in console["request"] if fnmatch.fnmatchcase(s, p)}


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
