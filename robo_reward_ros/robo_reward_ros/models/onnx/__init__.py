"""The vision tower through ONNX Runtime: export and inference."""
