"""Model resolution: the packaged GGUF becomes a trainable checkpoint, converted once."""

from __future__ import annotations

import pytest

from ptrain.engine import models
from ptrain.errors import ConfigError


def test_an_unknown_model_says_what_is_accepted():
    with pytest.raises(ConfigError, match="smollm2-135m or a Hugging Face checkpoint directory"):
        models.resolve_model("no-such-model")


def test_a_checkpoint_directory_is_used_as_it_is(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    assert models.resolve_model(str(tmp_path)) == tmp_path


@pytest.mark.slow
def test_the_default_model_converts_once_into_a_trainable_checkpoint():
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = models.resolve_model(models.DEFAULT_MODEL)
    assert models.is_prepared(models.DEFAULT_MODEL)
    stamp = next(path.glob("*.safetensors")).stat().st_mtime
    assert models.resolve_model(models.DEFAULT_MODEL) == path  # cached, not converted again
    assert next(path.glob("*.safetensors")).stat().st_mtime == stamp

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert getattr(model.config, "quantization_config", None) is None
    ids = tokenizer("The capital of France is", return_tensors="pt").input_ids
    out = model(ids, labels=ids)
    out.loss.backward()  # a GGUF-loaded model that kept its quantizer would refuse to train
    assert torch.isfinite(out.loss)
    assert model.model.embed_tokens.weight.grad is not None
