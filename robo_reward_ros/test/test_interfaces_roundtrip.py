# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Every robo_reward_msgs message and service crosses a process boundary intact."""
import os

# A plain import: a broken interface build must fail here, never be skipped.
import robo_reward_msgs.msg
import robo_reward_msgs.srv

from message_fill import filled, interface_classes
from ros_echo_peer import reply_seed
from ros_fixtures import PACKAGE_ROOT, python_script, spin_until

MSGS_PACKAGE = os.path.join(os.path.dirname(PACKAGE_ROOT), "robo_reward_msgs")


def _declared(kind: str):
    return sorted(name[:-len(kind) - 1] for name in os.listdir(os.path.join(MSGS_PACKAGE, kind)))


def test_every_declared_interface_is_generated():
    assert sorted(c.__name__ for c in interface_classes(robo_reward_msgs.msg)) == _declared("msg")
    assert sorted(c.__name__ for c in interface_classes(robo_reward_msgs.srv)) == _declared("srv")


def test_messages_round_trip_between_processes(ros_node, spawn):
    peer = spawn(python_script("ros_echo_peer.py"), name="echo_peer")
    received = {}
    publishers = {}
    for cls in interface_classes(robo_reward_msgs.msg):
        publishers[cls] = ros_node.create_publisher(cls, f"roundtrip/in/{cls.__name__}", 10)
        ros_node.create_subscription(
            cls, f"roundtrip/out/{cls.__name__}",
            lambda msg, name=cls.__name__: received.setdefault(name, msg), 10)
    spin_until(ros_node, lambda: all(
        p.get_subscription_count() > 0 and ros_node.count_publishers(p.topic_name.replace("/in/", "/out/")) > 0
        for p in publishers.values()), what="discovery of the echo peer", processes=[peer])
    sent = {}
    for seed, (cls, publisher) in enumerate(publishers.items(), start=1):
        sent[cls.__name__] = filled(cls, seed)
        publisher.publish(sent[cls.__name__])
    spin_until(ros_node, lambda: len(received) == len(sent), what="echoed messages",
               processes=[peer])
    for name, msg in sent.items():
        assert received[name] == msg, name
    assert received["FailureEvent"].description == sent["FailureEvent"].description
    assert len(received["RewardEstimate"].frame_stamps) == 3


def test_services_round_trip_between_processes(ros_node, spawn):
    peer = spawn(python_script("ros_echo_peer.py"), name="echo_peer")
    services = interface_classes(robo_reward_msgs.srv)
    clients = {srv: ros_node.create_client(srv, f"roundtrip/{srv.__name__}") for srv in services}
    spin_until(ros_node, lambda: all(c.service_is_ready() for c in clients.values()),
               what="the echo peer's services", processes=[peer])
    for seed, (srv, client) in enumerate(clients.items(), start=11):
        request = filled(srv.Request, seed)
        future = client.call_async(request)
        spin_until(ros_node, future.done, what=f"{srv.__name__} response", processes=[peer])
        # The peer derives its reply from the serialized request it received: equal replies
        # mean the request arrived intact and the reply came back intact.
        assert future.result() == filled(srv.Response, reply_seed(request)), srv.__name__


def test_the_core_enums_are_the_message_constants():
    """The core decides in its enums and the messages carry them: one set of numbers and names."""
    from robo_reward_msgs.msg import FailureEvent, TaskState

    from robo_reward_ros.core.events import FailureKind, Severity, TaskStatus

    def constants(message, prefix):
        return {name[len(prefix):]: getattr(message, name) for name in dir(message)
                if name.startswith(prefix)}

    assert constants(TaskState, "STATUS_") == {s.name: s.value for s in TaskStatus}
    assert constants(FailureEvent, "KIND_") == {k.name: k.value for k in FailureKind}
    assert constants(FailureEvent, "SEVERITY_") == {s.name: s.value for s in Severity}
