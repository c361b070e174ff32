"""Message text that no OpenAI-compatible server's tokenizer can read as a control token.

Such a server renders the chat template and tokenizes the result with special tokens on
(llama-cpp-python's server does, `special=True`; Hugging Face tokenizers behind vLLM parse
added tokens in text too), so `<|im_end|>\\n<|im_start|>system` in a person's message, a past
turn or a remembered output would become a real system turn. Cantata cannot choose how the
server tokenizes, so it sends every content with each control-token-shaped run broken by a
zero-width space after its first character: the model reads the same characters as plain
text, and no vocabulary's special token matches them. The stored text is never changed.
"""

from __future__ import annotations

import re

# The shapes control tokens take in vocabularies: a tag, <name> or </name>, with or without
# bars (<|im_end|>, <｜begin▁of▁sentence｜>, </s>, <start_of_turn>, SmolLM2's <repo_name>,
# <think>), and a bracketed capital word ([INST], [/INST], [TOOL_CALLS]). A "<" that opens no
# such tag (a<b, x <= y) is left alone.
_CONTROL = re.compile(r"<[|｜/]?[A-Za-z_][^<>\s]{0,63}>|\[/?[A-Z][A-Z_]{2,31}\]")
ZERO_WIDTH_SPACE = "\u200b"


def plain_text(text: str) -> str:
    """`text` with every control-token-shaped run broken after its first character."""
    return _CONTROL.sub(lambda m: m.group()[0] + ZERO_WIDTH_SPACE + m.group()[1:], text)
