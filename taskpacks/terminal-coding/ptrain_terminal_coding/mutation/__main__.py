"""`python -m ptrain_terminal_coding.mutation [--build]`: the command lives in cli.py."""

from ptrain_terminal_coding.mutation.cli import main

main()
