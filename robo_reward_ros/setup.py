# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""ament_python build of robo_reward_ros: the Python package, launch and config files."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robo_reward_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    # The demo model trained here (training/demo_model.py), loaded by the demo when present.
    package_data={PACKAGE: ["data/demo-robometer/*"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.xml")),
        (f"share/{PACKAGE}/config/foxglove", glob("config/foxglove/*.json")),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="robo_reward_ros maintainers",
    maintainer_email="maintainers@robo-reward-ros.invalid",
    description="A vision-language reward model on a ROS 2 robot.",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "reward_node = robo_reward_ros.node.reward_node:main",
            "synthetic_camera = robo_reward_ros.node.synthetic_camera:main",
            "operator_overlay = robo_reward_ros.node.operator_overlay:main",
            "operator_console = robo_reward_ros.console.operator_console:main",
            "robo-reward = robo_reward_ros.cli.main:main",
        ],
    },
)
