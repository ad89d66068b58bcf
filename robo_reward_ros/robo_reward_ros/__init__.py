"""robo_reward_ros: a vision-language reward model on a ROS 2 robot.

``core`` and ``models`` import no rclpy, so the offline tools and the tests can use them on a
machine without ROS; the ROS shell (nodes, conversions) lives beside them.
"""
