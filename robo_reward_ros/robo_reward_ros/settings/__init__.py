"""The reward node's parameters and their validation: ROS-free, read by the node and the offline tools alike."""
