"""Test fixtures that ship with ptrain for its tests and benchmarks (a local Ray cluster); no product code imports them."""
