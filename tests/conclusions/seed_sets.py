"""The two seed sets of tests/conclusions (CONTRIBUTING.md, "Conclusions that survive their own
experiments"): a threshold or a conclusion is written from ``WRITTEN_SEEDS`` and then checked,
unchanged, on ``HELD_OUT_SEEDS``, which nobody looked at while writing it. A conclusion that fails
a held-out seed is re-scoped (the prose says where it holds), not re-tuned.

    from seed_sets import ALL_SEEDS, HELD_OUT_SEEDS, WRITTEN_SEEDS, seed_id

    @pytest.mark.parametrize("seed", ALL_SEEDS, ids=seed_id)
    def test_something(seed): ...

``seed_id`` names a test "seed 3" or "held-out seed 7", so a held-out failure is visible as one.
"""

WRITTEN_SEEDS = (0, 1, 2, 3, 4)  # the thresholds are written from these
HELD_OUT_SEEDS = (5, 6, 7, 8, 9)  # ... and checked on these, unchanged
ALL_SEEDS = WRITTEN_SEEDS + HELD_OUT_SEEDS


def seed_id(seed) -> str:
    """A test id: 'seed 3' for a written seed, 'held-out seed 7' for a held-out one."""
    return f"held-out seed {seed}" if seed in HELD_OUT_SEEDS else f"seed {seed}"
