"""The ROS 2 shell: the lifecycle node and what only translates between ROS and the core."""
