"""ROS-free reward model backends (Robometer, RoboReward, TOPReward). Imports no rclpy."""
