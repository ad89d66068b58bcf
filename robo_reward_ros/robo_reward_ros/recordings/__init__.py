"""Recordings and their formats (episodes, rosbag2, MCAP, LeRobot, labels, videos, replay traces).

Read and written without ROS; shared by replay, evaluation and training.
"""
