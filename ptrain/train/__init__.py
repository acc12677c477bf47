"""Training: GRPO math as pure functions (grpo.py), batches (batch.py), the policy (model.py), the loop (loop.py)."""
