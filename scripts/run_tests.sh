#!/usr/bin/env bash
# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# The whole test suite on a fresh machine, in legs; each leg sets up its own venv
# (scripts/setup.sh: the lock for its Python and ROS 2 distro, colcon build), then runs pytest:
#   default  Python 3.11 ($PYTHON), ROS 2 Kilted, every test     .venv ($ROBO_REWARD_VENV)
#   py3.10   Python 3.10, ROS 2 Kilted, the ROS-free tests and    .venv-py3.10
#            five ROS tests (below; docs/development.md, "What each leg runs, and why")
#   jazzy    Python 3.12, ROS 2 Jazzy, the ROS tests that can     .venv-jazzy
#            depend on the distro (below)
# ROBO_REWARD_LEGS="default" runs only the first (the quick loop); the default is all three.
# Extra arguments go to pytest in every leg (e.g. scripts/run_tests.sh -k messages -x).
# Each leg runs its tests on ROBO_REWARD_TEST_WORKERS pytest-xdist workers (default: one more
# than the cores, at most 8; 0 runs them in the pytest process), a test file at a time per
# worker, the longest files first (conftest.py, LONGEST_FIRST), and prints its ten slowest tests.
# The later legs' venvs are set up in the background while the first leg's tests run (logs in
# log/run_tests/). Every leg runs; the exit status is the first failing leg's (0 when all pass).
# A leg's tests that run past its ceiling (about three times their time on 2 cores; every leg's
# ROBO_REWARD_LEG_TIMEOUT_MIN overrides it) are stopped with a Ctrl-C, so pytest still prints
# what failed, and the next leg runs: CI's 90 minutes must end with a report, not a kill.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
test_dir=robo_reward_ros/test
# The ROS tests: those that start nodes or executables, or use rclpy and the messages directly.
ros_tests=(test_reward_node.py test_reward_node_faults.py test_reward_node_lifecycle.py
           test_reward_node_without_bitsandbytes.py test_reward_node_disk_faults.py
           test_reward_node_health_clock.py test_reward_node_input_guards.py
           test_reward_node_transport_loss.py test_reward_client.py test_gym_env.py
           test_operator_overlay.py test_interfaces_roundtrip.py test_ros_compat.py
           test_entry_points.py test_security.py test_live_replay.py test_episode_player_pauses.py test_soak_short.py
           test_demo.py test_demo_console.py test_reward_server.py test_ray_free_imports.py
           test_fastdds_profiles.py test_launch_file.py test_operator_loop.py test_operator_console.py
           test_reward_node_verifier.py test_model_thresholds.py)
# The ROS tests the py3.10 leg keeps: those whose outcome can depend on the interpreter and its
# libraries (3.10's rclpy build, numpy 2.2 in messages, the node's model stack on 3.10's
# versions, the entry points installed there, a robot's install without Ray). The rest test the
# node's behaviour in code that test_python_versions.py checks for 3.10 (compile and vermin); the
# default and jazzy legs run them.
py310_ros_tests=(test_reward_node.py test_interfaces_roundtrip.py test_ros_compat.py
                 test_entry_points.py test_ray_free_imports.py)
# The ROS tests the jazzy leg runs: those whose outcome can depend on the distro (its rclpy:
# executors, lifecycle and parameter services, signal handling, clocks, QoS events; its rmw and
# Fast DDS: discovery, service replies, transport, the profiles XML; its generated messages; the
# graph the SROS2 policies must cover; a long run's memory and threads). The others test the
# node's own Python (input checks, models, thresholds, the verifier, episode logs on disk, the
# reward server, the demo's player and numbers): the same code the default leg runs on Kilted.
jazzy_tests=(test_reward_node.py test_reward_node_faults.py test_reward_node_lifecycle.py
             test_reward_node_health_clock.py test_reward_node_transport_loss.py
             test_reward_client.py test_operator_loop.py test_operator_console.py
             test_operator_overlay.py test_interfaces_roundtrip.py test_ros_compat.py
             test_entry_points.py test_ray_free_imports.py test_launch_file.py
             test_fastdds_profiles.py test_security.py test_soak_short.py test_demo_console.py)

# The tests wait on processes (discovery, start-up, wall-clock soaks) a third of the time: one
# worker more than the cores fills it (docs/development.md, "Why three workers"). The ROS domains
# per session allow 8 (conftest.py).
workers=$(( $(nproc) + 1 ))
[ "$workers" -le 8 ] || workers=8

# A leg's settings (interpreter, distro, venv) and the tests it runs.
leg_plan() {
  settings=()
  tests=("$test_dir")
  minutes=40
  case $1 in
    default) ;;
    py3.10)
      minutes=15
      settings=(PYTHON=python3.10 ROBO_REWARD_VENV="$root/.venv-py3.10")
      # Style, and the check that the source needs nothing newer than 3.10: properties of the
      # source, not of the interpreter running the tests.
      tests=("$test_dir" --ignore="$test_dir/test_code_style.py"
             --ignore="$test_dir/test_python_versions.py")
      local test
      for test in "${ros_tests[@]}"; do
        [[ " ${py310_ros_tests[*]} " == *" $test "* ]] || tests+=(--ignore="$test_dir/$test")
      done ;;
    jazzy)
      minutes=12
      settings=(PYTHON=python3.12 ROBO_REWARD_ROS_DISTRO=jazzy ROBO_REWARD_VENV="$root/.venv-jazzy")
      tests=("${jazzy_tests[@]/#/$test_dir/}") ;;
    *) echo "run_tests: unknown leg '$1' (default, py3.10, jazzy)" >&2; exit 2 ;;
  esac
  minutes=${ROBO_REWARD_LEG_TIMEOUT_MIN:-$minutes}
}

read -r -a legs <<< "${ROBO_REWARD_LEGS:-default py3.10 jazzy}"
for leg in "${legs[@]}"; do leg_plan "$leg"; done  # an unknown leg stops here, before any work

# The later legs' venvs are set up in the background (niced) while the first leg's tests run:
# the tests wait on nodes and servers much of the time, and a fresh venv is minutes of installing
# and building. Each leg then runs setup.sh again, which finds nothing left to do.
prepared=$root/log/run_tests
prepare_later_legs() {
  local leg
  for leg in "${legs[@]:1}"; do
    leg_plan "$leg"
    (
      if [ ${#settings[@]} -gt 0 ]; then export "${settings[@]}"; fi
      nice -n 10 bash scripts/setup.sh
    ) > "$prepared/setup-$leg.txt" 2>&1 && echo 0 > "$prepared/setup-$leg.rc" \
      || echo 1 > "$prepared/setup-$leg.rc"
  done
}
background=""
trap '[ -z "$background" ] || kill "$background" 2>/dev/null || true' EXIT

status=0
results=()
for index in "${!legs[@]}"; do
  leg=${legs[$index]}
  leg_plan "$leg"
  echo "=== run_tests: leg $leg ${settings[*]}"
  started=$SECONDS
  rc=0
  if [ -n "$background" ]; then
    while [ ! -f "$prepared/setup-$leg.rc" ] && kill -0 "$background" 2>/dev/null; do sleep 2; done
    [ ! -f "$prepared/setup-$leg.txt" ] || sed 's/^/(prepared in the background) /' "$prepared/setup-$leg.txt"
  fi
  # (set -e does not apply inside a subshell that is part of ||: chain with &&.)
  (
    if [ ${#settings[@]} -gt 0 ]; then export "${settings[@]}"; fi
    bash scripts/setup.sh
  ) || rc=$?
  if [ "$index" -eq 0 ] && [ ${#legs[@]} -gt 1 ]; then
    rm -rf "$prepared" && mkdir -p "$prepared"
    prepare_later_legs &
    background=$!
  fi
  [ "$rc" -ne 0 ] || (
    if [ ${#settings[@]} -gt 0 ]; then export "${settings[@]}"; fi
    . scripts/env.sh && timeout --foreground --signal=INT --kill-after=90 \
      "$((minutes * 60))" python -m pytest \
      -n "${ROBO_REWARD_TEST_WORKERS:-$workers}" --dist loadfile --no-loadscope-reorder --durations=10 "${tests[@]}" "$@"
  ) || rc=$?
  [ "$rc" -ne 124 ] || echo "=== run_tests: leg $leg: its tests ran past $minutes min and were stopped"
  results+=("$leg: exit $rc in $((SECONDS - started)) s")
  [ "$status" -ne 0 ] || status=$rc
done
echo "=== run_tests: ${results[*]/%/;}"
exit "$status"
