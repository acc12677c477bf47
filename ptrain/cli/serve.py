"""`ptrain serve`: a model behind an OpenAI-compatible HTTP API, the way vLLM serves one.

The in-process `hf` engine answers /v1/completions (token ids in and out, for the `openai` engine)
and /v1/chat/completions (for agent harnesses); see ptrain/serve/server.py. It serves until Ctrl-C
or SIGTERM, then finishes cleanly: the listener closes and the engine stops.
"""

from __future__ import annotations

import asyncio
import signal
import sys

import typer
from rich.console import Console

from ptrain.engine.models import DEFAULT_MODEL

console = Console()


def serve(
    model: str = typer.Option(DEFAULT_MODEL, help="A packaged model name or a checkpoint directory."),
    host: str = typer.Option("127.0.0.1", help="Where to listen; 0.0.0.0 for every interface."),
    port: int = typer.Option(8000, help="The port to listen on; 0 picks a free one."),
    kv_budget_tokens: int = typer.Option(
        None, help="KV cache slots for the running batch (default: from free memory)."
    ),
    max_batch: int = typer.Option(None, help="Most sequences generated at once (default: the engine's)."),
    served_name: str = typer.Option(None, help="The model name clients pass (default: the model's)."),
    threads: int = typer.Option(None, help="torch CPU threads (default: torch's, one per core)."),
    dtype: str = typer.Option("auto", help="The weights' dtype: auto (the checkpoint's), float32, bfloat16, float16."),
    text_only: bool = typer.Option(
        False, "--text-only", help="Answer like an API that returns text only (no token ids), to test text mode."
    ),
) -> None:
    """Serve a model over an OpenAI-compatible API (completions with token ids, chat with tools)."""
    options = {"kv_budget_tokens": kv_budget_tokens, "max_batch": max_batch, "threads": threads, "dtype": dtype}
    asyncio.run(_serve(model, host, port, served_name, {k: v for k, v in options.items() if v}, text_only))


async def _serve(
    model: str, host: str, port: int, served_name: str | None, options: dict[str, int | str], text_only: bool = False
) -> None:
    from transformers import AutoTokenizer

    from ptrain.engine.hf import HFEngine
    from ptrain.engine.models import resolve_model
    from ptrain.serve.server import serve as serve_engine

    path = resolve_model(model)
    with console.status(f"loading {model}"):
        tokenizer = AutoTokenizer.from_pretrained(path)
        engine = HFEngine.load(path, **options)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    def ready(url: str) -> None:
        name = served_name or engine.model
        console.print(
            f"serving [bold]{name}[/] at {url} (context {engine.context_window} tokens); Ctrl-C stops", soft_wrap=True
        )
        sys.stdout.flush()

    try:
        await serve_engine(
            engine, tokenizer, host, port, served_name=served_name, text_only=text_only, stop=stop, on_ready=ready
        )
    finally:
        await engine.close()
    console.print("stopped")
