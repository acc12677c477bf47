"""ptrain: post-train language models with reinforcement learning on real tasks."""

__version__ = "0.1.0"
