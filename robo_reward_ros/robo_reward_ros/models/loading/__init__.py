"""From a model id or directory to a backend: layouts, precision, presets, registry."""
