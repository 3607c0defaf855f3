"""Weighting the real questions' training views against the corpus-made ones."""

import pytest

from rag_assets.core.routing.held_out_routing import LabelledView, weight_real_views
from rag_assets.core.routing.samples import SYNTHETIC_QID_PREFIX


def _view(qid: str) -> LabelledView:
    # Only the qid matters to the weighting; the view itself is carried through untouched.
    return LabelledView(qid, f"query of {qid}", "rendered", "[REFUSE]", example=None)


def test_real_views_repeat_and_synthetic_ones_stay_single_in_order() -> None:
    synthetic = f"{SYNTHETIC_QID_PREFIX}cloze:doc:3"
    views = [_view("nq-1"), _view(synthetic), _view("nq-2")]
    weighted = weight_real_views(views, 3)
    assert [v.qid for v in weighted] == ["nq-1", "nq-1", "nq-1", synthetic, "nq-2", "nq-2", "nq-2"]
    assert weighted[1] is views[0]  # the same view, not a changed copy


def test_weight_one_keeps_the_views_as_they_are() -> None:
    views = [_view("q-1"), _view(f"{SYNTHETIC_QID_PREFIX}heading:doc:1")]
    assert weight_real_views(views, 1) == views


def test_a_weight_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="weight must be at least 1, got 0"):
        weight_real_views([_view("q-1")], 0)
