"""Suicide warning signs, explicit and indirect, in English and French, as guard rules.

The rules are data (issue #19): lexicon/<locale>/phrases.yaml lists ways of saying each sign
in the first person, helpers.yaml a helper's worry about someone else, grammar.yaml the same
signs as small vocabularies that combine (a first-person frame x one's own death, ending,
absence or a method, x a future time where the sign needs one), with the building blocks
they share in terms.yaml. Each sign names its clinical source (C-SSRS, the 988 Lifeline,
AFSP, the French 3114, Stanley & Brown, NICE NG225: lexicon/README.md).
tests/data/coaching/safety/ holds the labelled set that measures them; every fresh batch
written after the rules has found wordings they lack (see its headers), so the held-out
figures, not the development ones, are the honest measure.
"""

from __future__ import annotations

from cantata.pipelines.coaching.lexicon import load_signs
from cantata.pipelines.coaching.rules import Rule

# In this order: the guard lists a sentence's hits in the order of its rules.
RULES: tuple[Rule, ...] = load_signs("phrases") + load_signs("helpers") + load_signs("grammar")
