"""A generator from outside twinbench, shaped as a plugin package ships one (tests only).

support_deletion: the state with its support sentence deleted (redaction 1.0.0's recipe). It
reads the base-scenario pool without a fixed share, so it splits that pool with redaction.
A plugin names it in its pyproject.toml:

    [project.entry-points."twinbench.generators"]
    support_deletion = "plugin_generator:SupportDeletion"
"""

from __future__ import annotations

from collections.abc import Sequence

from twinbench.corpus import Scenario
from twinbench.generators import CorpusPool, Generator, Pair, Reads
from twinbench.generators.base import join, ordered_question
from twinbench.records import ReasonCode


class SupportDeletion(Generator[Scenario]):
    """Item = the state without its support sentence; twin = the full state."""

    name = "support_deletion"
    version = "0.1.0"
    family = ReasonCode.UNDERSPECIFIED_STATE
    inputs = (Reads(CorpusPool.SCENARIOS),)

    def sources(self) -> Sequence[Scenario]:
        return self.pool.scenarios

    def generate(self, source: Scenario, seed: int) -> Pair:
        question = ordered_question(source, seed) or source.question
        kept = [s for i, s in enumerate(source.state) if i != source.support]
        return self.pair(
            source.id,
            seed,
            item={"state": join(kept), "question": question},
            twin={"state": join(source.state), "question": question},
            answer=source.answer,
            provenance={
                "source_id": source.id,
                "edit": f"deleted sentence {source.support}",
                "removed": source.state[source.support],
            },
        )

    def validity(self, pair: Pair) -> list[str]:
        removed = pair.item.provenance["removed"]
        if removed in pair.item.state or removed not in pair.twin.state:
            return ["the item must be the twin without its support sentence"]
        return []
