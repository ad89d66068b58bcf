# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# Source this to use the project venv and its colcon build in a shell:  . scripts/env.sh
# (no system ROS needed). Discovery stays on this machine unless you override it.
_robo_reward_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_robo_reward_venv=$_robo_reward_root/.venv  # scripts/setup.sh's defaults: .venv-jazzy for Jazzy
case ${ROBO_REWARD_ROS_DISTRO:-kilted} in kilted) ;; *) _robo_reward_venv+=-$ROBO_REWARD_ROS_DISTRO ;; esac
_robo_reward_venv=${ROBO_REWARD_VENV:-$_robo_reward_venv}
export VIRTUAL_ENV="$_robo_reward_venv"
export PATH="$_robo_reward_venv/bin:$_robo_reward_venv/lib/robo_reward_ros:$PATH"
export AMENT_PREFIX_PATH="$_robo_reward_venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
export ROS_LOG_DIR=${ROS_LOG_DIR:-$_robo_reward_venv/colcon/ros-log}
unset _robo_reward_root _robo_reward_venv
