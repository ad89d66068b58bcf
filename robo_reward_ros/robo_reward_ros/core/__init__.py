"""ROS-free core: frame window, sampling, task monitor, metrics. Imports no rclpy."""
