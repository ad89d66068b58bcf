# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward filter`` on bag sources: one bag per kept span, with the messages of the span only.

The project's own bags (``sim-bags`` layout: frame-numbered ``/ground_truth``, ``/episode``,
``/instruction``) and a robot's two-camera recording are cut; each frame's red is its frame
number, so the project's bag readers tell which source frames a span bag holds.
"""
import hashlib
import json
import os

import numpy as np
import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")
pytest.importorskip("pyarrow", reason="pyarrow is not installed")

from robot_recordings import write_recording  # noqa: E402

FPS = 10


def _episode(name, instruction, count):
    from robo_reward_ros.core.frame import Frame
    from robo_reward_ros.recordings.episode import Episode, FrameTruth
    frames = [Frame(stamp=k / FPS, rgb=np.full((24, 32, 3), 20 * k, np.uint8)) for k in range(count)]
    truth = [FrameTruth(0, k >= count - 2, k / (count - 1)) for k in range(count)]
    return Episode(name=name, instructions=(instruction,), frames=frames, truth=truth, outcome="success",
                   failure_step=None, task=name)


@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    folder = tmp_path_factory.mktemp("bags")
    paths = {"ep_a": write_episode_bag(_episode("ep_a", "open the drawer", 10), str(folder / "ep_a")),
             "ep_b": write_episode_bag(_episode("ep_b", "close the drawer", 8), str(folder / "ep_b"))}
    paths["robot"] = write_recording(str(folder / "robot"), {"/cam/front": "rgb8", "/cam/wrist": "rgb8"},
                                     [("stack the cups", [(20 * k / 255, 0.0) for k in range(9)])], fps=FPS,
                                     instruction_topic="/task")
    return {name: os.path.abspath(path) for name, path in paths.items()}


def _row(bag, instruction, start, end, score, rank):
    return {"source": bag, "kind": "bag", "episode": os.path.basename(bag), "instruction": instruction,
            "start_frame": start, "end_frame": end, "start_time": start / FPS, "end_time": (end - 1) / FPS,
            "final_progress": score, "progress_gain": 0.0, "success": 0.5, "preference": float("nan"),
            "score": score, "rank": rank, "ranked_by": "final_progress"}


def _ranking(path, rows):
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.Table.from_pylist(rows), str(path))
    return str(path)


def _run(argv, capsys):
    from robo_reward_ros.cli.filter import main
    status = main(list(argv) + ["--quiet"])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _messages(bag):
    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        return [(conn.topic, log_ns, bytes(raw)) for conn, log_ns, raw in reader.messages()]


@pytest.fixture(scope="module")
def filtered(bags, tmp_path_factory):
    from robo_reward_ros.cli.filter import main
    folder = tmp_path_factory.mktemp("filtered")
    ranking = _ranking(folder / "ranking.parquet", [
        _row(bags["ep_a"], "open the drawer", 3, 7, 0.9, 1), _row(bags["ep_a"], "open the drawer", 0, 2, 0.2, 2),
        _row(bags["ep_b"], "close the drawer", 0, 8, 0.8, 1)])
    out = str(folder / "picked")
    assert main([ranking, "--out", out, "--top", "1", "--quiet"]) == 0
    return ranking, out


def test_a_span_bag_holds_the_spans_frames_and_reads_as_an_episode(bags, filtered):
    from robo_reward_ros.recordings.episode_bag import read_episode_bag
    _, out = filtered
    assert sorted(os.listdir(out)) == ["ep_a_f000003-000007", "ep_b", "manifest.csv", "manifest.json"]
    episode = read_episode_bag(os.path.join(out, "ep_a_f000003-000007"))
    assert [int(f.rgb[..., 0].mean()) // 20 for f in episode.frames] == [3, 4, 5, 6]
    assert [f.stamp for f in episode.frames] == pytest.approx([0.0, 0.1, 0.2, 0.3])
    assert episode.instructions == ("open the drawer",) and episode.name == "ep_a_f000003-000007"
    # /ground_truth is renumbered from the span's first frame and keeps each frame's own label.
    assert [round(t.progress * 9) for t in episode.truth] == [3, 4, 5, 6]
    assert episode.outcome == "success"  # the recorded episode's own outcome


def test_only_messages_inside_the_span_are_copied_and_context_is_carried(bags, filtered):
    _, out = filtered
    source = _messages(bags["ep_a"])
    cut = _messages(os.path.join(out, "ep_a_f000003-000007"))
    frames = [log for topic, log, _ in source if topic == "/camera/image_raw"]
    first, last = frames[3], frames[6]
    inside = [(topic, log, raw) for topic, log, raw in source if first <= log <= last]
    # Every image and ground-truth message of the span, byte for byte for the images.
    assert [m for m in cut if m[0] == "/camera/image_raw"] == [m for m in inside if m[0] == "/camera/image_raw"]
    assert [log for topic, log, _ in cut if topic == "/ground_truth"] == frames[3:7]
    # The instruction and the episode metadata, recorded once at frame 0, come again at the span's start.
    carried = {topic: log for topic, log, _ in cut if topic in ("/instruction", "/episode")}
    assert carried == {"/instruction": first, "/episode": first}
    assert all(first <= log <= last for _, log, _ in cut)
    from robo_reward_ros.recordings.typestore import kilted_typestore
    raw = next(raw for topic, _, raw in cut if topic == "/episode")
    metadata = json.loads(kilted_typestore().deserialize_cdr(raw, "std_msgs/msg/String").data)
    assert metadata["span"] == {"bag": bags["ep_a"], "name": "ep_a", "start_frame": 3, "end_frame": 7}


def test_a_whole_episode_keeps_its_whole_bag(bags, filtered):
    _, out = filtered
    source, copy = _messages(bags["ep_b"]), _messages(os.path.join(out, "ep_b"))
    assert [(t, log) for t, log, _ in copy] == [(t, log) for t, log, _ in source]
    assert [raw for t, _, raw in copy if t == "/camera/image_raw"] == [
        raw for t, _, raw in source if t == "/camera/image_raw"]


def test_the_manifest_names_each_bag_and_its_reason(filtered, bags):
    _, out = filtered
    with open(os.path.join(out, "manifest.json")) as handle:
        manifest = json.load(handle)
    assert manifest["kind"] == "bag" and manifest["counts"]["kept_rows"] == 2
    assert [(k["bag"], k["source"], k["start_frame"], k["end_frame"]) for k in manifest["kept"]] == [
        ("ep_a_f000003-000007", bags["ep_a"], 3, 7), ("ep_b", bags["ep_b"], 0, 8)]
    assert [(o["episode"], o["start_frame"], o["reason"]) for o in manifest["left_out"]] == [
        ("ep_a", 0, "rank 2: not among the best 1 left for this instruction")]


def test_a_robot_recording_is_cut_by_the_named_camera_with_every_camera_in_the_span(bags, tmp_path, capsys):
    from robo_reward_ros.recordings.robot_recording import RecordingOptions, decoded_episodes
    ranking = _ranking(tmp_path / "r.parquet", [_row(bags["robot"], "stack the cups", 2, 5, 0.7, 1)])
    out = str(tmp_path / "robot_spans")
    status, stdout, err = _run([ranking, "--out", out, "--top", "1", "--camera-topic", "/cam/front",
                                "--context-topic", "/task"], capsys)
    assert status == 0, err
    assert "1 bag(s), 3 frames" in stdout
    bag = os.path.join(out, "robot_f000002-000005")
    counts = {}
    for topic, _, _ in _messages(bag):
        counts[topic] = counts.get(topic, 0) + 1
    assert counts == {"/cam/front": 3, "/cam/wrist": 3, "/task": 1}
    for camera in ("/cam/front", "/cam/wrist"):
        options = RecordingOptions(camera_topics=(camera,), instruction_topic="/task")
        recorded, frames = next(decoded_episodes(bag, options, max_pixels=10**6))
        assert recorded.instructions == ("stack the cups",)
        assert [int(f.rgb[..., 0].mean()) // 20 for f in frames] == [2, 3, 4]


def test_bad_bag_input_gives_one_clear_line(bags, tmp_path, capsys):
    cases = [
        ([_row(bags["ep_b"], "close the drawer", 4, 12, 0.8, 1)], "has 8 frames; the span [4, 12) reaches past"),
        ([_row(str(tmp_path / "moved" / "ep_a"), "open the drawer", 0, 2, 0.8, 1)], "no longer exists"),
        ([_row(bags["ep_b"], "close", 0, 2, 0.8, 1), {**_row(bags["ep_a"], "open", 0, 2, 0.8, 1), "kind": "lerobot"}],
         "both LeRobot and bag sources"),
    ]
    for number, (rows, message) in enumerate(cases):
        out = str(tmp_path / "out")
        status, _, err = _run([_ranking(tmp_path / f"bad{number}.parquet", rows), "--out", out, "--top", "1"], capsys)
        assert status == 1 and err.count("\n") == 1 and message in err, err
        assert not os.path.exists(out)


def _hashes(root):
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                found[os.path.relpath(os.path.join(folder, name), root)] = hashlib.sha256(handle.read()).hexdigest()
    return found


def test_ray_writes_the_same_bags_as_one_process(filtered, tmp_path, capsys):
    pytest.importorskip("ray.data", reason="Ray Data is not installed (requirements/scale.txt)")
    ranking, out = filtered
    on_ray = str(tmp_path / "on_ray")
    status, _, err = _run([ranking, "--out", on_ray, "--top", "1", "--ray"], capsys)
    assert status == 0, err
    single, parallel = _hashes(out), _hashes(on_ray)
    assert set(single) == set(parallel)
    assert {name for name in single if single[name] != parallel[name]} == {"manifest.json"}  # names its folder
