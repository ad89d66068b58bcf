"""A shared reward server (Ray Serve) and the wire format its remote clients speak."""
