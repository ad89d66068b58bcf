"""A shared reward server (Ray Serve) for robots that have no GPU of their own (models/remote/ is its wire format)."""
