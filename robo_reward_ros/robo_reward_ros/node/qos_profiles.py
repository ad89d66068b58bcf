"""QoS of the reward node's own topics, shared by the node and by anything that listens to it.

Task inputs (instruction, task) are latched with depth 1: only the current task matters. The
node's task state and reset requests are latched with depth 10: a late joiner still gets the
current state, and a live subscriber that is briefly busy does not lose a transition (an
episode end followed at once by the next episode's start).
"""
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

LATCHED_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)
STATE_QOS = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                       reliability=ReliabilityPolicy.RELIABLE)
EVENTS_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
