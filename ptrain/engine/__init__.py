"""Inference engines and model resolution."""
