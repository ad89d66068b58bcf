"""Offline evaluation: episodes in ROS 2 bags, replay through the reward pipeline, metrics and plots.

Imports no rclpy, except ``live_replay`` (which drives the installed node over ROS).
"""
