"""helpers.claims: a lesson's check says what it claims, prints it when it holds and says what was
found when it does not."""

import pytest
import torch

from helpers import claim, claim_close


def test_claim_prints_the_statement_and_the_evidence(capsys):
    claim("two heads learn both relations", 1.0 >= 0.99, "accuracy 1.0000")
    claim("softmax rows sum to 1", torch.tensor(True))
    assert capsys.readouterr().out == ("✓ two heads learn both relations (accuracy 1.0000)\n"
                                       "✓ softmax rows sum to 1\n")


def test_a_false_claim_fails_with_what_was_found(capsys):
    with pytest.raises(AssertionError, match=r"^✗ one head learns both relations: accuracy 0\.6100$"):
        claim("one head learns both relations", 0.61 >= 0.99, "accuracy 0.6100")
    assert capsys.readouterr().out == ""


def test_claim_close_passes_and_fails_like_assert_close(capsys):
    claim_close("ours equals PyTorch's", torch.ones(3), torch.ones(3))
    assert capsys.readouterr().out == "✓ ours equals PyTorch's\n"
    with pytest.raises(AssertionError, match="✗ ours equals PyTorch's: Tensor-likes are not close"):
        claim_close("ours equals PyTorch's", torch.ones(3), torch.zeros(3))
    claim_close("close enough at atol 0.1", torch.tensor(1.05), torch.tensor(1.0), rtol=0, atol=0.1)


@pytest.mark.parametrize(("args", "error"), [
    (("", True), "statement must be a non-empty str"),
    ((None, True), "statement must be a non-empty str"),
    (("x", 1), "holds must be a bool"),
    (("x", torch.tensor([True, False])), "reduce it first"),
    (("x", True, 0.5), "shown must be a str"),
])
def test_claim_refuses_what_is_not_a_claim(args, error):
    with pytest.raises(TypeError, match=error):
        claim(*args)


# ---- a learner's own settings: use_settings and report ------------------------------------------
from helpers import claims  # noqa: E402


@pytest.fixture
def fresh_session(monkeypatch):
    """Each test starts with no use_settings call, as a fresh kernel does."""
    monkeypatch.setattr(claims, "_session", claims._Session())


def test_under_the_stored_settings_a_failing_claim_still_raises(fresh_session, capsys):
    settings = claims.use_settings(SEED=0, STEPS=800, stored=dict(SEED=0, STEPS=800))
    assert settings.are_stored and settings.changed == {}
    assert capsys.readouterr().out == ""  # nothing printed: stored outputs stay as they were
    claim("holds", True)
    with pytest.raises(AssertionError, match=r"^✗ does not hold: 0\.61$"):
        claim("does not hold", False, "0.61")
    with pytest.raises(AssertionError, match="✗ equal: Tensor-likes are not close"):
        claim_close("equal", torch.ones(2), torch.zeros(2))


def test_under_a_learners_settings_a_failing_claim_prints_and_goes_on(fresh_session, capsys):
    settings = claims.use_settings(SEED=5, STEPS=800, stored=dict(SEED=0, STEPS=800))
    assert not settings.are_stored and settings.changed == {"SEED": (5, 0)}
    out = capsys.readouterr().out
    assert out.startswith("Your settings: SEED = 5 (stored: SEED = 0).") and "✗" in out
    claim("holds", True, "1.00")
    claim("does not hold", False, "0.61")
    claim("no evidence", torch.tensor(False))
    claim_close("equal", torch.ones(2), torch.zeros(2))
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["✓ holds (1.00)", "✗ does not hold (0.61; under your settings: SEED = 5)",
                       "✗ no evidence (under your settings: SEED = 5)"]
    assert out[3].startswith("✗ equal (Tensor-likes are not close!") and out[3].endswith(
        "; under your settings: SEED = 5)")


def test_report_lists_what_held_under_a_learners_settings(fresh_session, capsys):
    claims.use_settings(SEED=7, STEPS=1600, stored=dict(SEED=0, STEPS=800))
    claim("first", True, "0.9")
    claim("second", False, "0.2")
    capsys.readouterr()
    claims.report()
    assert capsys.readouterr().out.splitlines() == [
        "Under your settings (SEED = 7, STEPS = 1600): 1 of 2 claims held.",
        "Did not hold:", "  ✗ second (0.2)", "Held:", "  ✓ first (0.9)"]


def test_report_under_the_stored_settings_counts_the_claims(fresh_session, capsys):
    claims.use_settings(SEED=0, stored=dict(SEED=0))
    claim("first", True)
    claim_close("second", torch.ones(1), torch.ones(1))
    capsys.readouterr()
    claims.report()
    assert capsys.readouterr().out.startswith("Under the stored settings all 2 claims held")


def test_use_settings_starts_a_new_record(fresh_session, capsys):
    claims.use_settings(SEED=1, stored=dict(SEED=0))
    claim("from the first run", False)
    claims.use_settings(SEED=2, stored=dict(SEED=0))  # the learner runs the notebook again
    claim("from the second run", True)
    capsys.readouterr()
    claims.report()
    assert capsys.readouterr().out.splitlines()[0] == "Under your settings (SEED = 2): 1 of 1 claims held."


def test_without_use_settings_claims_raise_and_report_asks_for_it(fresh_session):
    assert claims.current_settings() is None
    with pytest.raises(AssertionError):
        claim("does not hold", False)
    with pytest.raises(RuntimeError, match="call use_settings"):
        claims.report()


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"SEED": 0, "stored": [("SEED", 0)]}, TypeError, "stored must be a dict"),
    ({"stored": {}}, TypeError, "name at least one setting"),
    ({"SEED": 0, "stored": {"STEPS": 800}}, ValueError, "stored must name the same settings"),
])
def test_use_settings_refuses_what_is_not_a_settings_cell(fresh_session, kwargs, error, match):
    with pytest.raises(error, match=match):
        claims.use_settings(**kwargs)
