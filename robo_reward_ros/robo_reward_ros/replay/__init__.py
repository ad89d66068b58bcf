"""Recorded episodes through the node's own reward pipeline, offline: in one process or on Ray."""
