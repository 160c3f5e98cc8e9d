"""The settled label: how a tool-authored outcome edits the model's intent.

When a call settles, the tool may say how it went: a full replacement (`outcome`,
"Found 12 results for OAuth handling") or an in-place edit of one span of the intent
(`outcome_patch`, `{"from": "Searching", "to": "Searched"}`), which keeps whatever the
model wrote around it. Absent either, the intent stays exactly as written: there is
deliberately no tense rewrite, which would guess wrong in any language but English.
"""

from __future__ import annotations

from collections.abc import Mapping

OUTCOME_FIELD = "outcome"
"""Tool result field: the full replacement label."""

OUTCOME_PATCH_FIELD = "outcome_patch"
"""Tool result field: the `{"from", "to"}` in-place edit of the intent."""


def _non_blank(text: object) -> bool:
    return isinstance(text, str) and text.strip() != ""


def apply_outcome(
    intent: str | None,
    outcome: str | None = None,
    outcome_patch: Mapping[str, object] | None = None,
) -> str | None:
    """The settled label: a non-blank `outcome` wins; else `outcome_patch`; else `intent`.

    The patch `{"from", "to"}` replaces the FIRST occurrence of `from`, case-sensitive
    and literal (no regex, so `$` or backslashes in `to` stay as written). A missing
    or empty `from`, a `from` not in the intent, or a malformed patch is a no-op.
    Never a tense rewrite: an unpatched intent comes back unchanged, in any language.
    """
    if _non_blank(outcome):
        return outcome
    if intent is None or not isinstance(outcome_patch, Mapping):
        return intent
    old = outcome_patch.get("from")
    new = outcome_patch.get("to")
    if not isinstance(old, str) or not old or not isinstance(new, str) or old not in intent:
        return intent
    return intent.replace(old, new, 1)
