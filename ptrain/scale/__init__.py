"""Scale-out: Ray workers for rollout, verification and evaluation (workers.py), and the policy weights
they receive from a trainer elsewhere (weights.py). Needs the `ray` extra; nothing else imports it."""
