# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""QoS of the reward node's own topics, shared by the node and by anything that listens to it.

Latched topics keep one message: a late subscriber gets the current task (instruction, task)
or the current state (task_state), never stale history. Events (estimates, failures, reset
requests) are not replayed to a late subscriber: a controller that restarts must not act on an
old reset request; the latched task_state says where things stand.
"""
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

LATCHED_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)
# For a subscriber of a latched topic that must not miss a transition while briefly busy (an
# episode end followed at once by the next start): its own queue is deeper, the publisher's
# history (what a late joiner gets) stays one message.
LATCHED_LISTENER_QOS = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                  reliability=ReliabilityPolicy.RELIABLE)
EVENTS_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
# The task services' request queue: the default (10) overflowed under a burst of calls, and the
# calls it dropped were never answered; the node answers calls over its budget at once instead
# (core/call_budget.py), so the queue drains.
SERVICE_QOS = QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
