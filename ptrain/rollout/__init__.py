"""Rollout: how a model acts in an episode, token in and token out.

chat.py   the chat format: prompt, tool results and the next generation prompt as token ids
parse.py  tool calls out of the model's text (Hermes `<tool_call>` JSON or one ```bash block)
"""
