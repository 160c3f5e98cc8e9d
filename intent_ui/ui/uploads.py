"""Reading an uploaded file with a cap, so a huge upload never sits in memory whole.

Reflex hands an upload over as a file the server has already spooled (to disk past a
small size); `read()` without a size would copy all of it into memory before any check
could look at its length. This reads in chunks and stops one byte past the cap, like
`netguard.read_capped` does for a downloaded body.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["UPLOAD_CHUNK_BYTES", "read_capped_upload"]

UPLOAD_CHUNK_BYTES = 64 * 1024


class _Readable(Protocol):
    async def read(self, size: int = -1) -> bytes: ...


async def read_capped_upload(upload: _Readable, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of `upload`, and whether there was more (having read at most
    one byte more than `limit`)."""
    body = bytearray()
    while len(body) <= limit:
        chunk = await upload.read(min(UPLOAD_CHUNK_BYTES, limit + 1 - len(body)))
        if not chunk:
            return bytes(body), False
        body += chunk
    return bytes(body[:limit]), True
