# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A Gymnasium wrapper whose reward, terminated and truncated come from a reward node.

Each ``step`` renders the wrapped environment's camera frame, publishes it to the node (as a
camera driver would, stamped with the wall clock), and waits, bounded, for the node's step
covering that frame. ``reset`` starts a new node episode. The environment's own reward stays in
``info["env_reward"]``. A step that does not come in time is marked missing
(``info["reward_missing"]``, reward ``missing_reward``, NaN by default): never a made-up number.

Frames are best effort, and discovery is not symmetric: the publisher can see the node's
subscription before the node has matched the publisher, and the node drops what comes before
that (a quarter of first frames, measured on a loaded 2-core machine). So until the node has
scored one of this wrapper's frames (after creation, and again at every reset: a restarted node
discovers it anew), the frame waited on is resent every ``RESEND_SEC``, stamp and all: a node that
already has it takes it as the same frame again (no new window, no extra step), so every step the
node makes still reaches the agent.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, Optional, Sequence

import gymnasium
import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from robo_reward_ros.client.reward_client import DECIDERS, EpisodeGone, RewardClient, StepTimeout
from robo_reward_ros.node.stamps import to_time

RESEND_SEC = 0.5


class RewardNodeEnv(gymnasium.Wrapper):
    """``env`` with the node's rewards; ``render`` returns its camera frame (HxWx3 uint8 RGB).

    ``instructions``: the task (one stage each) set at every reset; None keeps the node's task.
    ``frame_sink``: called with (stamp, RGB frame) of every frame as it is published (once, not per resend).
    """

    def __init__(self, env: gymnasium.Env, client: RewardClient,
                 render: Optional[Callable[[], np.ndarray]] = None,
                 instructions: Optional[Sequence[str]] = None,
                 camera_topic: str = "camera/image_raw", frame_id: str = "env_camera",
                 step_timeout_sec: float = 10.0, missing_reward: float = math.nan,
                 frame_sink: Optional[Callable[[float, np.ndarray], None]] = None) -> None:
        super().__init__(env)
        self.client = client
        self._render = render or env.render
        self._instructions = list(instructions) if instructions else None
        self._frame_id = frame_id
        self._timeout = step_timeout_sec
        self._missing = missing_reward
        self._frame_sink = frame_sink  # gets each frame as published (a recorder: the rollouts to train on)
        self._publisher = client.node.create_publisher(
            Image, camera_topic, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
        self._last_stamp = 0.0
        self._heard = False  # the node has scored a frame of this publisher (module docstring)
        self.episode_id = ""

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._heard = False
        if self._instructions:
            self.episode_id = self.client.set_task(self._instructions, start_episode=True)
        else:
            self.episode_id = self.client.start_episode(reason="environment reset")
        info = dict(info, episode_id=self.episode_id, **self._node_info(
            self._publish_and_wait()))
        return obs, info

    def step(self, action):
        obs, env_reward, env_terminated, env_truncated, info = self.env.step(action)
        step = self._publish_and_wait()
        info = dict(info, env_reward=float(env_reward), episode_id=self.episode_id,
                    **self._node_info(step))
        if step is None:
            return obs, self._missing, False, bool(env_truncated), info
        # The environment's own end (its time limit) truncates; the node decides the task's end.
        return obs, float(step.reward), bool(step.terminated), \
            bool(step.truncated or env_truncated), info

    def _wait_for_the_nodes_subscription(self, deadline: float) -> None:
        """Wait (until ``deadline``) for the node to subscribe: a frame sent before reaches nobody."""
        while self._publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.02)  # discovery runs in the middleware's threads; nothing to spin here

    def _publish_and_wait(self):
        """Publish the current frame; return the node's step covering it, or None when missing.

        One step timeout bounds both waits: for the node's subscription, then for its step.
        """
        deadline = time.monotonic() + self._timeout
        self._wait_for_the_nodes_subscription(deadline)
        stamp = max(time.time(), self._last_stamp + 1e-3)  # a camera's clock never goes back
        self._last_stamp = stamp
        rgb = np.ascontiguousarray(self._render(), dtype=np.uint8)
        msg = Image(height=rgb.shape[0], width=rgb.shape[1], encoding="rgb8",
                    step=rgb.shape[1] * 3, data=rgb.tobytes())
        msg.header.stamp = to_time(stamp)
        msg.header.frame_id = self._frame_id
        self._publisher.publish(msg)
        if self._frame_sink is not None:
            self._frame_sink(stamp, rgb)
        while True:
            left = deadline - time.monotonic()
            wait = left if self._heard else min(left, RESEND_SEC)
            try:
                step = self.client.wait_for_step(stamp, max(0.0, wait), self.episode_id or None)
            except EpisodeGone:
                return None
            except StepTimeout:
                if self._heard or time.monotonic() >= deadline:
                    return None
                self._publisher.publish(msg)  # not heard yet: the same frame again
                continue
            self._heard = True
            return step

    def _node_info(self, step) -> Dict[str, Any]:
        if step is None:
            return {"reward_missing": True}
        return {
            "reward_missing": False,
            "progress": float(step.progress),
            "task_progress": float(step.task_progress),
            "success_probability": float(step.success_probability)
            if step.has_success_probability else None,
            "stage_index": int(step.stage_index),
            "stage_count": int(step.stage_count),
            "stage_succeeded": bool(step.stage_succeeded),
            "episode_return": float(step.episode_return),
            "end_reason": step.end_reason,
            "status": int(step.status),  # TaskState.STATUS_*: PENDING while a decision waits for the operator
            # A person was in control: a demonstration transition (HIL-SERL keeps these apart).
            "intervened": bool(step.intervened),
            # Who decided what this step ended: model, operator, time_limit, abort ("" for none).
            "decided_by": DECIDERS.get(step.decided_by.source, ""),
            "decider": step.decided_by.name,
            "failures": [(f.kind, f.description) for f in self.client.failures(step.episode_id)],
        }
