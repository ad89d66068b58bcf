"""ROS-free reward model backends (Robometer, RoboReward, TOPReward). Imports no rclpy.

Construct with :func:`load_reward_model`; every backend is a :class:`RewardModel`.
Heavy modules (torch, transformers) load only when a backend is built.
"""
from .checkpoint_layout import CheckpointError
from .frame_selection import select_frames
from .loader import BACKENDS, load_reward_model
from .choices import DEVICES, PRECISIONS
from .reward_model import Capabilities, Frame, ModelOutput, RewardModel

__all__ = ["BACKENDS", "DEVICES", "PRECISIONS", "Capabilities", "CheckpointError", "Frame", "ModelOutput",
           "RewardModel", "load_reward_model", "select_frames"]
