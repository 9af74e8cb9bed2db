"""Checks of notebooks 03-05's code that used to sit in lesson cells, and of what their figures show."""

import torch


def test_nb03_hand_set_projections_are_the_exercise_checkers():
    """Exercises 1 and 2 of notebook 03 use section 3's hand-set W_q and W_k: the same numbers."""
    from notebook_code import notebook_definitions

    from helpers.exercises import nb03

    ns = notebook_definitions("03_self_attention_qkv", "W_q", "W_k")
    torch.testing.assert_close(ns["W_q"].detach().cpu(), torch.tensor(nb03.HAND_W_Q))
    torch.testing.assert_close(ns["W_k"].detach().cpu(), torch.tensor(nb03.HAND_W_K))


def test_nb04_exercise_2_cases_are_what_the_notebook_describes():
    from _repo import ROOT, load, source

    from helpers.exercises import nb04

    text = "\n".join(source(c) for c in load(ROOT / "notebooks" / "04_masks.ipynb")["cells"])
    for case, (ids, position) in nb04.CHANGE_CASES.items():
        assert f"`{list(ids)}`" in text and f"position {position}" in text, case


def test_nb05_heatmap_labels_are_positions_so_repeated_tokens_stay_apart():
    """The trained heads' heatmaps label rows and columns position:token (token ids repeat)."""
    from notebook_code import notebook_definitions

    ns = notebook_definitions("05_multi_head_attention", "vocab_size", "two_relation_batch", "test_ids", "labels")
    assert len(set(ns["labels"])) == len(ns["labels"]) == ns["test_ids"].shape[1]
    assert ns["labels"][0] == f"0:{ns['test_ids'][0, 0].item()}"
