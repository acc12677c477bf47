"""`ptrain serve`: an engine as an OpenAI-compatible HTTP server (vLLM's fields and LoRA endpoints).

server.py    the app: routes, handlers, sampling a request, errors as OpenAI error bodies
request.py   a request's body checked and its prompt and sampling fields read
response.py  completion and chat response bodies, with their logprobs
chat_api.py  OpenAI chat messages and tools to and from ptrain's chat format (ptrain/rollout/chat.py)

It sits above the engine and beside rollout: the chat endpoint lays messages out exactly as an
episode's ids are laid out, so an agent harness talking to it sees what ptrain's rollouts see.
"""
