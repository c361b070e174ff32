"""What a warning sign means for the tier, as a clinician grades it (issue #19).

The rules (signs.py), the evidence score (evidence.py) and the learned signal (learned.py)
say WHICH sign a sentence holds; this module says how much it weighs, from data a clinician
reviews (lexicon/grading.yaml; the phrases in lexicon/<locale>/contexts.yaml):

- Graded tiers, after the C-SSRS screener's triage (Posner et al. 2011) and the 988/AFSP
  warning signs. A passive wish (item 1: to be dead, not to wake up, not to exist, to
  disappear, "I want to die") without a thought of acting, a method, intent or a plan is
  LOW: the coach checks in, offers the resource and keeps coaching gently. Active thoughts
  (killing oneself, ending one's life, suicide), intent, a plan, preparation, a farewell
  with finality, command voices: HIGH. Intent with a time or the means at hand, or refusing
  to be stopped: IMMINENT.
- Accumulation a clinician would recognise: weak signs add up only when they are distinct
  warning signs (each family once: every phrasing of a passive wish is one sign), close in
  time (WINDOW recent turns; older weak signs no longer count), never the learned signal
  alone, and with at least one sign that names the risk itself (death, ending, self-harm,
  hopelessness about living, a means, a farewell with finality: RISK_FAMILIES). A remark
  about money, a goodbye at the end of a chat and "I'm ready" three times are not a crisis.
- A learned read that keeps coming back (SUSTAINED: that many of the last few turns read at
  its score or above) is one more sign, counted once; like every learned read it never grounds
  a tier, and it counts only beside a sign of the rules or the evidence that names the risk
  other than a passive wish (guard.accumulate).
- What the turns say together (CONTEXT): the learned signal reads the last few turns as one, and a
  strong read is a high sign only when no sentence alone reads that strongly, the rules or the evidence
  read a warning sign in those turns, and one of them names a risk concept (guard._context_read).
"""

from __future__ import annotations

from cantata.pipelines.coaching import lexicon

_GRADING = lexicon.bundled_grading()
_CONTEXTS = lexicon.bundled_contexts()

# The family every phrasing of a passive wish is counted as (C-SSRS item 1).
PASSIVE = "passive_wish"
PASSIVE_WEIGHT = _GRADING.passive_weight
WISH_FAMILIES = _GRADING.wish_families
PURE_WISH_FAMILIES = _GRADING.pure_wish_families
# What makes a wish active (C-SSRS items 2-5): matched on the tolerant() form of the sentence.
ACTIVE = _CONTEXTS.pattern("active")
RISK_FAMILIES = _GRADING.risk_families
WINDOW = _GRADING.window
SUSTAINED = _GRADING.sustained
CONTEXT = _GRADING.context
# Refusing to be stopped: with a session at high, the risk is imminent.
REFUSES_TO_BE_STOPPED = _CONTEXTS.pattern("refuses_to_be_stopped")
# The means laid out or at hand, the act under way or its time, said in everyday words: with a
# session at high, the risk is imminent (read only there: elsewhere these words are ordinary).
CLOSE_IN_SESSION = _CONTEXTS.pattern("close_in_session")


def is_passive(family: str, message: str) -> bool:
    """A wish to be dead or not to live, with nothing active anywhere in its message: "I want
    to die. I'm fine, forget I said that" and "wish I was dead. how many of these would it
    take" are not passive wishes, whichever sentence the wish is in. `message`: the tolerant()
    form of the whole message."""
    return family in WISH_FAMILIES and ACTIVE.search(message) is None


def names_risk(family: str) -> bool:
    return family in RISK_FAMILIES
