"""A bed card's NEWS2 badge from the patient's observation summary, pure: this stay's score
only, "incomplete" when the stay's newest set is partial, due from the admission before the
first set, and words on the clock."""

from __future__ import annotations

from datetime import UTC, datetime

from patients.domain import observation_summary as observed
from patients.pages.beds import news2_badge

ADMITTED = "2026-11-28T08:00:00+00:00"
SCORED = {"observationId": "o1", "takenAt": "2026-11-28T09:00:00+00:00", "admissionId": "a1",
          "score": 5, "risk": "medium", "nextDueAt": "2026-11-28T10:00:00+00:00",
          "escalation": None}


def test_it_shows_this_stays_score_and_its_escalation() -> None:
    summary = {"scored": SCORED, "lastTakenAt": SCORED["takenAt"], "lastComplete": True}
    badge = observed.badge(summary, "a1", ADMITTED)
    assert (badge["score"], badge["risk"], badge["notEscalated"]) == (5, "medium", True)
    assert badge["incomplete"] is False
    assert observed.badge(summary, "a2", ADMITTED)["score"] is None  # another stay's


def test_a_partial_newest_set_of_the_stay_is_incomplete() -> None:
    summary = {"scored": SCORED, "lastTakenAt": "2026-11-28T09:30:00.5+01:00",
               "lastComplete": False}
    assert observed.badge(summary, "a1", "2026-11-28T08:00:00")["incomplete"] is True
    before = {**summary, "lastTakenAt": "2026-11-28T07:00:00+00:00"}  # before this stay
    assert observed.badge(before, "a1", ADMITTED)["incomplete"] is False
    assert observed.badge({**summary, "lastTakenAt": "not a time"}, "a1", ADMITTED)[
        "incomplete"] is False


def test_before_any_set_it_is_due_from_the_admission() -> None:
    badge = observed.badge(None, "a1", ADMITTED)
    assert (badge["score"], badge["nextDueAt"], badge["incomplete"]) == (None, ADMITTED, False)


def test_the_card_says_it_in_words_on_the_clock() -> None:
    badge = observed.badge({"scored": SCORED}, "a1", ADMITTED)
    late = news2_badge(badge, datetime(2026, 11, 28, 11, 25, tzinfo=UTC))
    assert (late["risk_label"], late["overdue"], late["next_due"]) == (
        "Medium risk", "1 h 25 min", "")
    early = news2_badge(badge, datetime(2026, 11, 28, 9, 59, tzinfo=UTC))
    assert (early["overdue"], early["next_due"]) == ("", SCORED["nextDueAt"])
    unscored = news2_badge(observed.badge(None, "a1", "2026-11-28T08:00:00"),
                           datetime(2026, 11, 28, 8, 30, tzinfo=UTC))
    assert (unscored["risk"], unscored["risk_label"], unscored["overdue"]) == (
        "none", "No score yet", "30 min")  # a time kept without an offset is UTC
    assert news2_badge(None, datetime.now(UTC)) is None  # a card from before badges
