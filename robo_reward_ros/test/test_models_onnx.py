# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
import logging

import numpy as np
import pytest
import torch

from model_fixtures import make_frames
from robo_reward_ros.models import load_reward_model

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

CPU = ["CPUExecutionProvider"]


def test_onnx_vision_encoder_matches_torch_on_cpu(robometer_fp32, tmp_path):
    from robo_reward_ros.models.onnx.export import OnnxVisionEncoder, export_vision_onnx
    block = robometer_fp32._image_block(make_frames(1, seed=13)[0].rgb)
    patches = block.make_patches()
    vision = robometer_fp32.model.model.visual
    path = export_vision_onnx(vision, block.grid, patches.shape[1], str(tmp_path / "vision.onnx"))
    encoder = OnnxVisionEncoder(path, providers=CPU)
    assert encoder.providers == CPU
    assert encoder.grid == tuple(block.grid) and encoder.patch_size == 16
    embeds, deepstack = encoder(patches)
    with torch.no_grad():
        reference = vision(torch.from_numpy(patches), grid_thw=torch.tensor([block.grid]), return_dict=True)
    np.testing.assert_allclose(embeds, reference.pooler_output.numpy(), atol=1e-4)
    np.testing.assert_allclose(deepstack, torch.stack(list(reference.deepstack_features)).numpy(), atol=1e-4)


@pytest.fixture(scope="module")
def robometer_onnx_dir(robometer_fp32, tmp_path_factory):
    """Graphs for 224x224 and 256x320 frames, as ``robo-reward export-onnx --size 224 --size 256x320 DIR``."""
    from robo_reward_ros.models.onnx.export import export_sizes
    out = str(tmp_path_factory.mktemp("onnx") / "robometer_vision")
    export_sizes(robometer_fp32, [(224, 224), (256, 320)], out)
    return out


@pytest.fixture(scope="module")
def robometer_ort(tiny_robometer_dir, robometer_onnx_dir):
    model = load_reward_model(tiny_robometer_dir, precision="fp32", device="cpu", vision_runtime="onnx",
                              vision_onnx=robometer_onnx_dir, onnx_providers=CPU)
    yield model
    model.close()


def test_robometer_with_onnx_vision_matches_torch(robometer_ort, robometer_fp32):
    assert robometer_ort.vision_cache.encoder.provider == "CPUExecutionProvider"
    for height, width in ((224, 224), (240, 320)):  # 240x320 camera frames resize to 256x320
        frames = make_frames(6, height=height, width=width, seed=21)
        for use_cache in (True, False):  # the uncached path also runs the ORT encoder, without keeping features
            robometer_ort.reset()
            out = robometer_ort.score_batch("stack the cups", [frames], use_cache=use_cache)[0]
            reference = robometer_fp32.score_batch("stack the cups", [frames], use_cache=False)[0]
            np.testing.assert_allclose(out.progress, reference.progress, atol=1e-4)
            np.testing.assert_allclose(out.success, reference.success, atol=1e-4)
    clip_a, clip_b = make_frames(4, seed=22), make_frames(4, seed=23)
    assert abs(robometer_ort.prefer("stack", clip_a, clip_b) - robometer_fp32.prefer("stack", clip_a, clip_b)) < 1e-4


def test_onnx_vision_names_the_size_to_export(robometer_ort):
    with pytest.raises(ValueError, match=r"resized to 288x288 px.*224x224 px, 256x320 px.*--size 288x288"):
        robometer_ort.score("stack", make_frames(2, height=288, width=288, seed=24))


def test_onnx_runtime_logs_the_provider(tiny_robometer_dir, robometer_onnx_dir, caplog):
    from robo_reward_ros.models.onnx.runtime import OnnxBlockEncoder
    with caplog.at_level(logging.INFO, logger="robo_reward_ros.models.onnx.runtime"):
        OnnxBlockEncoder(robometer_onnx_dir, providers=CPU)
    assert "on CPUExecutionProvider" in caplog.text


def test_onnx_option_errors(tiny_robometer_dir):
    with pytest.raises(ValueError, match="needs vision_onnx"):
        load_reward_model(tiny_robometer_dir, precision="fp32", device="cpu", vision_runtime="onnx")
    with pytest.raises(ValueError, match="vision_runtime must be one of"):
        load_reward_model(tiny_robometer_dir, precision="fp32", device="cpu", vision_runtime="tensorrt")


def test_roboreward_with_onnx_vision_matches_torch(roboreward_fp32, tiny_roboreward_dir, tmp_path):
    from robo_reward_ros.models.onnx.export import export_sizes
    path = export_sizes(roboreward_fp32, [(224, 224)], str(tmp_path / "vision.onnx"))[0]  # 224 px frames stay 224
    model = load_reward_model(tiny_roboreward_dir, backend="roboreward", precision="fp32", device="cpu",
                              vision_runtime="onnx", vision_onnx=path, onnx_providers=CPU)
    try:
        frames = make_frames(4, seed=25)
        out = model.score("stack", frames)
        reference = roboreward_fp32.score("stack", frames)
        np.testing.assert_allclose(out.progress, reference.progress, atol=1e-4)
        np.testing.assert_allclose(out.extras["score_probs"], reference.extras["score_probs"], atol=1e-4)
    finally:
        model.close()


def test_export_command_writes_one_graph_per_size(tiny_robometer_dir, tmp_path, capsys):
    from robo_reward_ros.cli.export_onnx import main
    from robo_reward_ros.models.onnx.runtime import OnnxVisionEncoder
    assert main(["--model", tiny_robometer_dir, "--size", "224", "--size", "256x320", str(tmp_path / "out")]) == 0
    paths = capsys.readouterr().out.split()
    assert [p.rsplit("/", 1)[-1] for p in paths] == ["vision_224x224.onnx", "vision_256x320.onnx"]
    assert OnnxVisionEncoder(paths[1], providers=CPU).grid == (1, 16, 20)
