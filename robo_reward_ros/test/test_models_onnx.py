import numpy as np
import pytest
import torch

from model_fixtures import make_frames

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


def test_onnx_vision_encoder_matches_torch_on_cpu(robometer_fp32, tmp_path):
    from robo_reward_ros.models.onnx_vision import OnnxVisionEncoder, export_vision_onnx
    block = robometer_fp32._image_block(make_frames(1, seed=13)[0].rgb)
    patches = block.make_patches()
    vision = robometer_fp32.model.model.visual
    path = export_vision_onnx(vision, block.grid, patches.shape[1], str(tmp_path / "vision.onnx"))
    encoder = OnnxVisionEncoder(path, providers=["CPUExecutionProvider"])
    assert encoder.providers == ["CPUExecutionProvider"]
    embeds, deepstack = encoder(patches)
    with torch.no_grad():
        reference = vision(torch.from_numpy(patches), grid_thw=torch.tensor([block.grid]), return_dict=True)
    np.testing.assert_allclose(embeds, reference.pooler_output.numpy(), atol=1e-4)
    np.testing.assert_allclose(deepstack, torch.stack(list(reference.deepstack_features)).numpy(), atol=1e-4)
