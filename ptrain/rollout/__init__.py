"""Rollout: how a model acts in an episode, token in and token out, and many episodes at once.

chat.py       the chat format: prompt, tool results and the next generation prompt as token ids
parse.py      tool calls out of the model's text (Hermes `<tool_call>` JSON or one ```bash block)
loop.py       one episode: generate, call tools, limits, context budget and compaction
scheduler.py  many episodes in flight: groups, resume, retries, verification beside generation
work.py       what the scheduler hands out: one (task, sample)
lockstep.py   the barrier of `mode="lockstep"`, the synchronous baseline
progress.py   what a rollout did: counts and times
metrics.py    time per phase and the run's metrics file
gold.py       the taskpack's gold solutions as replies (`--engine gold`)
config.py     the rollout config
parts.py      a rollout's engine, chat format and sandbox pools from its config
"""
