"""Command-line tools of robo_reward_ros (no ROS needed)."""
