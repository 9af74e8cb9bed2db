"""tests/conclusions: every experimental conclusion a notebook states ("X beats Y", "X cannot",
"X explains Y", "X grows with Y") re-checked where it could break: at least three seeds, the
variations the notebook itself suggests (more steps, other sizes) and, for an explanation, the
control that would refute it. The prose of the notebook claims exactly the scope that holds here.

Every test in this folder carries the ``conclusions`` marker (the root conftest.py adds it). They
train many small models, so they are left out of a plain `python3 tasks.py test`; run them with
`python3 tasks.py test --conclusions` (everything) or `python3 tasks.py test -m conclusions`
(only them). CI runs them. One file per notebook: test_nbNN_topic.py; and
test_retrained_shipped_runs.py, which retrains the runs shipped with the repository.

Seeds: thresholds are written from seeds 0-4 and checked, unchanged, on the held-out seeds 5-9;
``seed_sets.py`` holds the two sets (``WRITTEN_SEEDS``, ``HELD_OUT_SEEDS``, ``ALL_SEEDS``) and
``seed_id`` for test ids; the ``written_seeds`` and ``held_out_seeds`` fixtures give the same tuples
to a test that loops over them itself.
"""

import pytest
from seed_sets import HELD_OUT_SEEDS, WRITTEN_SEEDS


@pytest.fixture(scope="session")
def written_seeds() -> tuple[int, ...]:
    """Seeds 0-4: the ones a conclusion's thresholds were written from."""
    return WRITTEN_SEEDS


@pytest.fixture(scope="session")
def held_out_seeds() -> tuple[int, ...]:
    """Seeds 5-9: never looked at while writing a threshold; it must hold on them unchanged."""
    return HELD_OUT_SEEDS
