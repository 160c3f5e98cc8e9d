"""A turn's stream entries: an event as its log record, and the entry that says the log
is written.

Entry `{seq}-0` is the event of that seq: fields `k` and `d`, the `(kind, data)` record
the log stores (`event_to_record`, data as JSON), and `p`, the seq of the event the owner
published before it. Seqs have holes (a run's end can skip one), so `p` is how a reader
knows it missed nothing: an entry whose `p` is above the last seq the reader has means
entries were lost (the stream was trimmed, or Redis dropped writes) and the reader must
go to the log. After the turn's end, `{seq}-1` (field `saved`) says its log is written:
a page may render the turn from the store from then on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from redis.typing import EncodableT, FieldT

from intent_ui.core.events import TurnEvent, event_from_record, event_to_record
from intent_ui.store.models import encode_json

__all__ = [
    "Entry",
    "Fields",
    "entry_fields",
    "entry_id",
    "entry_values",
    "is_refusal",
    "read_entry",
    "saved_fields",
]

_KIND, _DATA, _PREV, _SAVED = "k", "d", "p", "saved"

Fields = dict[FieldT, EncodableT]
"""An entry's fields as XADD takes them."""

# What Redis answers an XADD whose id is not above the stream's last: another producer
# wrote further (a worker that ended this turn), so this one is stale.
_REFUSAL = "equal or smaller than the target stream top item"


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry read back: an event, or (`event` None) the mark that the log is written."""

    seq: int
    prev: int
    event: TurnEvent | None


def entry_id(seq: int, n: int = 0) -> str:
    return f"{seq}-{n}"


def entry_values(event: TurnEvent, prev: int) -> tuple[str, str, str]:
    """The values of fields `k`, `d` and `p` (the writer's script names them itself)."""
    kind, data = event_to_record(event)
    return kind, encode_json(data), str(prev)


def entry_fields(event: TurnEvent, prev: int) -> Fields:
    kind, data, prev_seq = entry_values(event, prev)
    return {_KIND: kind, _DATA: data, _PREV: prev_seq}


def saved_fields() -> Fields:
    return {_SAVED: "1"}


def read_entry(entry: str, fields: Mapping[str, str]) -> Entry:
    """The entry `entry` (its id) with `fields`. Raises ValueError for one no worker of
    this version writes."""
    seq_text, _, _ = entry.partition("-")
    seq = int(seq_text)
    if _SAVED in fields:
        return Entry(seq, seq, None)
    try:
        kind, data, prev = fields[_KIND], json.loads(fields[_DATA]), int(fields[_PREV])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"stream entry {entry}: {exc}") from None
    return Entry(seq, prev, event_from_record(kind, seq, data))


def is_refusal(error: object) -> bool:
    """Whether Redis refused an XADD because the stream already went further."""
    return _REFUSAL in str(error)
