"""Episodes made here with known outcomes: Meta-World renders, a synthetic scene, videos, demo assets."""
