# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Benchmark 5: per-frame cost from a camera message to model input, at 640x480 and 1280x720.

Stages, as the node and the backends run them:
1. decode: ``sensor_msgs/Image`` fields (rgb8, bgr8) with ``decode_raw``, or ``CompressedImage``
   (jpeg, png) with ``decode_compressed``;
2. fit: ``fit_pixels`` to the node's ``cameras.max_pixels`` (default 50176 = 224x224), on arrival;
3. model input of one frame: Robometer (content hash, smart_resize + bicubic, normalise,
   patchify: one image block) and TOPReward (244x244 square, hash, 256x256 bicubic, normalise,
   patchify: half a two-frame video block).

Median milliseconds per frame over ``--repeat`` runs (after one warm-up), plus the message size.
"node ms/frame" is decode + fit as two calls (what the node did before this benchmark); "fused"
is the same result from one call with ``max_pixels`` (downscale before reordering channels or
leaving Pillow), checked equal here.

    python bench/bench_decode.py --json decode.json
"""
import argparse
import io
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as common  # noqa: E402

SIZES = ((640, 480), (1280, 720))


def scene(width, height, seed=0):
    """Draw a camera-like frame: smooth gradients, a few blocks and sensor noise (realistic JPEG sizes)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    img = np.stack([x / width * 200, y / height * 180, (x + y) / (width + height) * 160], axis=2)
    for _ in range(12):
        x0, y0 = rng.integers(0, width - 40), rng.integers(0, height - 40)
        img[y0:y0 + rng.integers(20, height // 3), x0:x0 + rng.integers(20, width // 3)] = rng.integers(0, 256, 3)
    img += rng.normal(0, 4, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def timed(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--max-pixels", type=int, default=50176, help="cameras.max_pixels")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    common.use_source_tree()
    from PIL import Image

    from robo_reward_ros.core.image_decoding import decode_compressed, decode_raw, fit_pixels
    from robo_reward_ros.models import load_reward_model
    from robo_reward_ros.models.testing.tiny_checkpoints import build_qwen3vl, build_robometer
    from robo_reward_ros.models.backends.topreward import FRAME_SIZE, _square
    from robo_reward_ros.models.qwen.video_blocks import video_blocks
    from robo_reward_ros.models.qwen.vision_preprocessing import video_smart_resize

    with tempfile.TemporaryDirectory(prefix="bench-decode-") as tmp:
        robometer = load_reward_model(build_robometer(os.path.join(tmp, "r")), backend="robometer",
                                      precision="fp32", device="cpu")
        topreward = load_reward_model(build_qwen3vl(os.path.join(tmp, "q")), backend="topreward",
                                      precision="fp32", device="cpu")
    video = topreward.processing.video

    def robometer_input(rgb):
        block = robometer._image_block(rgb)
        return block.make_patches()

    def topreward_input(rgb):
        square = _square(rgb, FRAME_SIZE)
        size = video_smart_resize(8, FRAME_SIZE, FRAME_SIZE, video.factor, video.temporal_patch_size,
                                  video.min_pixels, video.max_pixels)
        blocks, _, _ = video_blocks([square, square], size, video, [0.0, 0.5])  # 2 fps
        return blocks[0].make_patches()  # one two-frame block; its cost is split over its two frames

    rows, results = [], []
    for width, height in SIZES:
        rgb = scene(width, height)
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])
        jpeg = io.BytesIO()
        Image.fromarray(rgb).save(jpeg, format="JPEG", quality=90)
        png = io.BytesIO()
        Image.fromarray(rgb).save(png, format="PNG", compress_level=1)
        inputs = {
            "rgb8": (lambda: decode_raw("rgb8", height, width, width * 3, rgb.tobytes()), rgb.nbytes),
            "bgr8": (lambda: decode_raw("bgr8", height, width, width * 3, bgr.tobytes()), bgr.nbytes),
            "jpeg q90": (lambda: decode_compressed("jpeg", jpeg.getvalue()), len(jpeg.getvalue())),
            "png": (lambda: decode_compressed("png", png.getvalue()), len(png.getvalue())),
        }
        raw_bytes = {"rgb8": rgb.tobytes(), "bgr8": bgr.tobytes()}
        for name, (decode, nbytes) in inputs.items():
            if name in raw_bytes:  # the node gets the message's bytes; time only the decode, not tobytes()
                data = raw_bytes[name]
                decode = (lambda enc=name, d=data: decode_raw(enc, height, width, width * 3, d))
            decoded = decode()
            fitted = fit_pixels(decoded, args.max_pixels)
            t_decode = timed(decode, args.repeat)
            t_fit = timed(lambda: fit_pixels(decoded, args.max_pixels), args.repeat)
            if name in raw_bytes:
                fused = (lambda enc=name, d=raw_bytes[name]: decode_raw(enc, height, width, width * 3, d,
                                                                        max_pixels=args.max_pixels))
            else:
                fused = (lambda fmt=name.split()[0], d=(jpeg if name.startswith("jpeg") else png).getvalue():
                         decode_compressed(fmt, d, max_pixels=args.max_pixels))
            # A JPEG is decoded at a reduced scale (draft mode): the same size, close, not equal.
            difference = np.abs(fused().astype(int) - fitted)
            if fused().shape != fitted.shape or (
                    difference.mean() > 2.0 if name.startswith("jpeg") else difference.any()):
                raise AssertionError(f"fused decode differs for {name} {width}x{height}")
            t_fused = timed(fused, args.repeat)
            t_robometer = timed(lambda: robometer_input(fitted), args.repeat)
            t_topreward = timed(lambda: topreward_input(fitted), args.repeat) / 2.0
            result = {"size": f"{width}x{height}", "input": name, "message_bytes": nbytes,
                      "fitted_shape": list(fitted.shape), "decode_ms": t_decode, "fit_ms": t_fit,
                      "robometer_input_ms": t_robometer, "topreward_input_ms": t_topreward,
                      "node_total_ms": t_decode + t_fit, "fused_ms": t_fused,
                      "fused_speedup": (t_decode + t_fit) / t_fused,
                      "to_robometer_input_ms": t_decode + t_fit + t_robometer,
                      "to_topreward_input_ms": t_decode + t_fit + t_topreward}
            result["to_robometer_input_fused_ms"] = t_fused + t_robometer
            results.append(result)
            rows.append([result["size"], name, nbytes / 1024, "x".join(map(str, fitted.shape[:2])), t_decode, t_fit,
                         t_decode + t_fit, t_fused, result["fused_speedup"], t_robometer, t_topreward,
                         result["to_robometer_input_ms"], result["to_topreward_input_ms"]])
    robometer.close()
    topreward.close()
    memory = jpeg_memory(args.max_pixels)
    print(common.table(["camera", "input", "msg KiB", "fitted", "decode ms", "fit ms", "decode+fit ms",
                        "fused ms", "speedup", "Robometer prep ms", "TOPReward prep ms", "total Robometer ms",
                        "total TOPReward ms"],
                       rows, digits=2))
    print(common.table(["4096x4096 black JPEG", "peak RSS growth MiB"],
                       [[k, v] for k, v in memory.items()], digits=1))
    common.write_json(args.json, {"benchmark": "decode", "machine": common.machine(), "max_pixels": args.max_pixels,
                                  "repeat": args.repeat, "results": results, "jpeg_4096_peak_rss_mib": memory})
    return 0


MEMORY_PROBE = """
import sys
from robo_reward_ros.core.image_decoding import decode_compressed

def status(field):
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field + ":"))

big, pixels, small = sys.argv[1:]
max_pixels = int(pixels) or None
decode_compressed("jpeg", open(small, "rb").read(), max_pixels=max_pixels)  # imports, Pillow's set-up
data = open(big, "rb").read()
with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")  # the peak (VmHWM) starts again from the current RSS
before = status("VmRSS")
decode_compressed("jpeg", data, max_pixels=max_pixels)
print((status("VmHWM") - before) / 1024)
"""


def jpeg_memory(max_pixels: int) -> dict:
    """Peak RSS growth decoding one 4096x4096 JPEG, fresh process each: to the model's size vs whole."""
    import subprocess
    from PIL import Image
    with tempfile.TemporaryDirectory() as folder:
        big, small = os.path.join(folder, "big.jpg"), os.path.join(folder, "small.jpg")
        Image.new("RGB", (4096, 4096)).save(big, format="JPEG")
        Image.new("RGB", (64, 64)).save(small, format="JPEG")
        runs = {f"to max_pixels {max_pixels}": max_pixels, "whole frame": 0}
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # the source tree, as here
        return {what: float(subprocess.run([sys.executable, "-c", MEMORY_PROBE, big, str(pixels), small],
                                           check=True, capture_output=True, text=True, env=env).stdout)
                for what, pixels in runs.items()}


if __name__ == "__main__":
    sys.exit(main())
