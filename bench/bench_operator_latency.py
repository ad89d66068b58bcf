# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: from an operator's verdict to the TaskState and RewardStep it causes, while the node scores at full rate.

Two processes: the installed reward node (the demo model on the CPU by default, or ``--model
sleep`` for a model step of ``--model-s`` seconds) scoring a ``--camera-hz`` (30) camera fed from
this process at ``inference.rate_hz`` 20 (a step starts as soon as the last one ends when the
model is slower than that),
and this process, which per round waits for a running episode with scored steps, calls
``~/submit_verdict`` SUCCESS and times three things from the call: its answer, the TaskState that
says SUCCEEDED decided by the operator, and the episode's terminated RewardStep; then starts the
next episode. Prints p50/p95/max of each and the node's step rate during the rounds (the target:
p95 of the state and the step at most 200 ms on the project's 2-core machine).

    python bench/bench_operator_latency.py                       # 40 rounds, the demo model
    python bench/bench_operator_latency.py --model sleep --model-s 0.1 --rounds 60 --json op.json
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common as common  # noqa: E402


def node_argv(args) -> list:
    model = (["-p", "model.preset:=demo", "-p", "model.device:=cpu"] if args.model == "demo" else
             ["-p", 'model.preset:=""', "-p", "model.backend:=bench_sleep",
              "-p", "model.plugin_modules:=bench_sleep_backend", "-p", f'model.id:="{args.model_s}"'])
    return [args.reward_node, "--ros-args", *model, "-p", "inference.rate_hz:=20.0",
            "-p", "name_check_sec:=0.0", "-p", "timeout.episode_sec:=0.0",
            "-p", "success.threshold:=1.0", "-p", "success.progress_threshold:=1.0",  # only the operator ends it
            "-p", "episode_log.directory:=" + tempfile.mkdtemp(prefix="operator-bench-logs-")]


def measure(args) -> dict:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from robo_reward_msgs.msg import (DecidedBy, OperatorVerdict, RewardStep, StageSpec, TaskSpec,
                                      TaskState)
    from robo_reward_msgs.srv import SetTask, StartEpisode, SubmitVerdict
    from sensor_msgs.msg import Image

    from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_LISTENER_QOS

    env = {**os.environ, "ROS_DOMAIN_ID": str(args.domain),
           "PYTHONPATH": HERE + os.pathsep + os.environ.get("PYTHONPATH", "")}
    log = tempfile.NamedTemporaryFile(prefix="operator-bench-node-", suffix=".log", delete=False)
    process = subprocess.Popen(node_argv(args), env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    os.environ["ROS_DOMAIN_ID"] = str(args.domain)
    rclpy.init()
    node = rclpy.create_node("operator_bench")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    states, steps = [], []
    node.create_subscription(TaskState, "task_state", lambda m: states.append((time.monotonic(), m)),
                             LATCHED_LISTENER_QOS)
    node.create_subscription(RewardStep, "reward_step", lambda m: steps.append((time.monotonic(), m)),
                             EVENTS_QOS)
    verdict = node.create_client(SubmitVerdict, "/reward_node/submit_verdict")
    start = node.create_client(StartEpisode, "/reward_node/start_episode")
    set_task = node.create_client(SetTask, "/reward_node/set_task")
    camera = node.create_publisher(Image, "camera/image_raw", 10)
    frame = Image(height=224, width=224, encoding="rgb8", step=224 * 3)
    pixels = bytearray(os.urandom(224 * 224 * 3))
    next_frame = [time.monotonic()]

    def spin_until(condition, what, timeout=120.0):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"no {what} within {timeout:g} s; node log: {log.name}")
            now = time.monotonic()
            if now >= next_frame[0]:
                pixels[:64] = os.urandom(64)  # a new frame each time
                frame.data = bytes(pixels)
                frame.header.stamp = node.get_clock().now().to_msg()
                camera.publish(frame)
                next_frame[0] = now + 1.0 / args.camera_hz
            executor.spin_once(timeout_sec=0.002)

    def call(client, request, what):
        future = client.call_async(request)
        spin_until(future.done, f"answer from {what}")
        return future.result()

    try:
        spin_until(lambda: verdict.service_is_ready() and set_task.service_is_ready(), "node services")
        episode = call(set_task, SetTask.Request(task=TaskSpec(stages=[StageSpec(instruction="open the drawer")]),
                                                 start_episode=True), "set_task").episode_id
        answer_s, state_s, step_s, rounds_steps = [], [], [], []
        first_step_at = None
        for _ in range(args.rounds):
            spin_until(lambda: sum(1 for _, s in steps if s.episode_id == episode) >= 2, "scored steps")
            first_step_at = first_step_at or min(t for t, s in steps if s.episode_id == episode)
            sent = time.monotonic()
            request = SubmitVerdict.Request(verdict=OperatorVerdict(verdict=OperatorVerdict.SUCCESS,
                                                                    source="bench", episode_id=episode))
            future = verdict.call_async(request)
            spin_until(future.done, "the verdict's answer")
            answered = time.monotonic()
            if not future.result().success:
                raise RuntimeError(f"verdict refused: {future.result().message}")

            def ended_state():
                return next((t for t, m in states if m.episode_id == episode and m.status == TaskState.STATUS_SUCCEEDED
                             and m.decided_by.source == DecidedBy.OPERATOR), None)

            def ended_step():
                return next((t for t, m in steps if m.episode_id == episode and m.terminated), None)
            spin_until(lambda: ended_state() is not None and ended_step() is not None, "the end it caused")
            answer_s.append(answered - sent)
            state_s.append(ended_state() - sent)
            step_s.append(ended_step() - sent)
            rounds_steps.append(sum(1 for _, s in steps if s.episode_id == episode))
            episode = call(start, StartEpisode.Request(reason="next round"), "start_episode").episode_id
        scored = len(steps)
        elapsed = time.monotonic() - first_step_at
        return {"rounds": args.rounds, "answer": common.summary_ms(answer_s), "task_state": common.summary_ms(state_s),
                "reward_step": common.summary_ms(step_s), "steps_per_s": scored / elapsed,
                "steps_per_round_mean": sum(rounds_steps) / len(rounds_steps)}
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        common.stop_node_process(process, log)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--model", choices=("demo", "sleep"), default="demo")
    parser.add_argument("--model-s", type=float, default=0.1, help="seconds per step of --model sleep")
    parser.add_argument("--camera-hz", type=float, default=30.0)
    parser.add_argument("--domain", type=int, default=93)
    parser.add_argument("--reward-node", default=None, help="reward_node executable (default: the installed one)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    common.use_source_tree()
    args.reward_node = args.reward_node or shutil.which("reward_node")
    if not args.reward_node:
        print("reward_node is not installed: run `bash scripts/setup.sh` and `. scripts/env.sh` first")
        return 2
    result = measure(args)
    rows = [[what, result[what]["p50_ms"], result[what]["p95_ms"], result[what]["max_ms"]]
            for what in ("answer", "task_state", "reward_step")]
    print(f"model {args.model}: {result['rounds']} verdicts while the node scored {result['steps_per_s']:.1f} "
          f"steps/s ({result['steps_per_round_mean']:.1f} steps per episode)")
    print(common.table(["from the verdict call to", "p50 ms", "p95 ms", "max ms"], rows, digits=1))
    common.write_json(args.json, {"benchmark": "operator_latency", "machine": common.machine(),
                                  "model": args.model, "results": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
