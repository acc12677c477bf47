"""`python -m ptrain.cli`: the same as the `ptrain` command (torchrun and tests use it)."""

from ptrain.cli import main

main()
