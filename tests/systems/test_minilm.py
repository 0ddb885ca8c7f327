"""The MiniLM similarity system runs the shipped all-MiniLM-L6-v2 for real."""

from __future__ import annotations

from twinbench.records import ChoiceQuestion, NoulQuestion
from twinbench.systems import make_system
from twinbench.systems.base import Request

QUESTION = ChoiceQuestion(
    instructions="Which team should handle this ticket?",
    options=["billing and invoices", "network outage", "office furniture"],
)


def test_nearest_option_and_margin_gate() -> None:
    clear = Request(item_id="a", state="My invoice charged me twice this month.", question=QUESTION)
    noul = Request(
        item_id="b",
        state="The lamp was bought yesterday.",
        question=NoulQuestion(instructions="Was the lamp bought yesterday?"),
    )
    out = make_system("minilm:0.0").respond([clear, noul])
    assert (out[0].status, out[0].abstain, out[0].answer) == ("ok", False, "billing and invoices")
    assert abs(sum(out[0].probabilities.values()) - 1.0) < 1e-4
    assert 0.0 <= out[1].answer <= 1.0
    # a margin larger than any cosine gap makes it abstain, with the only code it can justify
    gated = make_system("minilm:1.5").respond([clear])
    assert (gated[0].abstain, gated[0].reason) == (True, "underspecified_state")
