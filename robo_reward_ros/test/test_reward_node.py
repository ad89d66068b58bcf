"""The reward node in its own process, seen from outside as an RL controller would see it."""
import os

import yaml
from rcl_interfaces.srv import ListParameters
from robo_reward_msgs.msg import StageSpec, TaskSpec, TaskState
from robo_reward_msgs.srv import SetTask, StartEpisode
from diagnostic_msgs.msg import DiagnosticArray

from robo_reward_ros.reward_node import LATCHED_QOS
from ros_fixtures import PACKAGE_ROOT, installed_executable, spin_until

CONFIG = os.path.join(PACKAGE_ROOT, "config", "reward.yaml")


def _call(node, client, request, processes):
    spin_until(node, client.service_is_ready, what=f"service {client.srv_name}", processes=processes)
    future = client.call_async(request)
    spin_until(node, future.done, what=f"reply of {client.srv_name}", processes=processes)
    return future.result()


def test_node_scores_camera_stream_and_reports(ros_node, spawn):
    camera = spawn([installed_executable("synthetic_camera"), "--ros-args", "-p", "rate_hz:=20.0"])
    node = spawn([installed_executable("reward_node"), "--ros-args", "--params-file", CONFIG,
                  "-p", "instruction:=put the red block on the green square"])
    processes = [camera, node]
    states, diagnostics = [], []
    ros_node.create_subscription(TaskState, "task_state", states.append, LATCHED_QOS)
    ros_node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)

    # Latched state reaches a subscriber that joined after it was published.
    spin_until(ros_node, lambda: states, what="latched task_state", processes=processes)
    assert states[-1].status == TaskState.STATUS_RUNNING
    assert states[-1].instruction == "put the red block on the green square"
    assert states[-1].stage_count == 1
    first_episode = states[-1].episode_id
    assert first_episode

    def camera_frames():
        for array in diagnostics:
            for status in array.status:
                if status.hardware_id == "camera/image_raw":
                    yield int({kv.key: kv.value for kv in status.values}["frames_received"])
    spin_until(ros_node, lambda: any(n > 0 for n in camera_frames()),
               what="diagnostics counting camera frames", processes=processes)

    set_task = ros_node.create_client(SetTask, "/reward_node/set_task")
    bad = SetTask.Request(task=TaskSpec(stages=[StageSpec(instruction="open the drawer"),
                                                StageSpec(instruction="   ")]))
    reply = _call(ros_node, set_task, bad, processes)
    assert not reply.success and "stage 1 has an empty instruction" in reply.message

    good = SetTask.Request(start_episode=True, task=TaskSpec(stages=[
        StageSpec(instruction="open the drawer"), StageSpec(instruction="put the cup in it")]))
    reply = _call(ros_node, set_task, good, processes)
    assert reply.success and reply.episode_id and reply.episode_id != first_episode
    spin_until(ros_node, lambda: states[-1].episode_id == reply.episode_id,
               what="task_state of the new episode", processes=processes)
    assert (states[-1].stage_count, states[-1].instruction) == (2, "open the drawer")

    start = ros_node.create_client(StartEpisode, "/reward_node/start_episode")
    restarted = _call(ros_node, start, StartEpisode.Request(episode_id="trial-7"), processes)
    assert restarted.success and restarted.episode_id == "trial-7"
    spin_until(ros_node, lambda: states[-1].episode_id == "trial-7",
               what="task_state of the restarted episode", processes=processes)

    for process in processes:
        assert process.interrupt() == 0, process.output()


def test_config_file_lists_exactly_the_declared_parameters(ros_node, spawn):
    node = spawn([installed_executable("reward_node"), "--ros-args", "--params-file", CONFIG])
    client = ros_node.create_client(ListParameters, "/reward_node/list_parameters")
    declared = set(_call(ros_node, client, ListParameters.Request(), [node]).result.names)
    # Every rclpy node has these; they are not ours to document.
    declared -= {"use_sim_time", "start_type_description_service"}
    with open(CONFIG) as handle:
        documented = set(yaml.safe_load(handle)["reward_node"]["ros__parameters"])
    assert declared == documented


def test_bad_frames_are_reported_and_the_node_keeps_running(ros_node, spawn):
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    node = spawn([installed_executable("reward_node")])
    camera = ros_node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
    diagnostics = []
    ros_node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    spin_until(ros_node, lambda: camera.get_subscription_count() > 0,
               what="the node's camera subscription", processes=[node])

    def camera_values():
        for array in diagnostics[-1:]:
            for status in array.status:
                if status.hardware_id == "camera/image_raw":
                    return {kv.key: kv.value for kv in status.values}
        return {}

    depth = Image(height=2, width=2, encoding="16UC1", step=4, data=bytes(8))
    good = Image(height=2, width=2, encoding="rgb8", step=6, data=bytes(12))

    def publish_until(msg, condition, what):
        def published_and_seen():
            camera.publish(msg)
            return condition(camera_values())
        spin_until(ros_node, published_and_seen, what=what, processes=[node])

    publish_until(depth, lambda v: int(v.get("frames_rejected", 0)) > 0, "the rejected frame in diagnostics")
    assert "unsupported encoding '16UC1'" in camera_values()["last_error"]
    publish_until(good, lambda v: int(v.get("frames_received", 0)) > 0, "a good frame after the bad one")
    assert node.interrupt() == 0, node.output()
    assert "frame rejected: unsupported encoding '16UC1'" in node.output()
