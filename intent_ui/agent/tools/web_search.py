"""`web_search`: a SearxNG-compatible search service, offered only when configured.

`GET {url}/search?q=<query>&format=json` answers `{"results": [{"title", "url",
"content"}, ...]}`. Network and HTTP failures become error results that say what to fix.
"""

from __future__ import annotations

import json

import httpx
from pydantic import Field

from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.native import Args, NativeTool, ToolError, cap_output, plural, short

__all__ = ["WebSearchArgs", "WebSearchTool"]

SNIPPET_CHARS = 300


class WebSearchArgs(Args):
    query: str = Field(min_length=1, description="What to search the web for.")
    max_results: int = Field(default=5, ge=1, le=20, description="How many results to return.")


class WebSearchTool(NativeTool):
    name = "web_search"
    description = "Search the web. Returns the title, URL and a snippet for each result."
    Arguments = WebSearchArgs

    def __init__(self, url: str, *, timeout: float = 15.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    async def run(self, args: WebSearchArgs) -> ToolResult:
        results = await self._fetch(args.query)
        picked = results[: args.max_results]
        label = short(args.query)
        if not picked:
            return ToolResult(f"No results for {args.query!r}.", outcome=f"No results for {label}")
        lines = []
        for number, item in enumerate(picked, 1):
            title = " ".join(str(item.get("title") or "(untitled)").split())
            snippet = " ".join(str(item.get("content") or "").split())
            if len(snippet) > SNIPPET_CHARS:
                snippet = snippet[: SNIPPET_CHARS - 1] + "…"
            lines.append(f"{number}. {title}\n   {item.get('url') or ''}")
            if snippet:
                lines.append(f"   {snippet}")
        return ToolResult(
            cap_output("\n".join(lines)),
            outcome=f"Found {plural(len(picked), 'result')} for {label}",
        )

    async def _fetch(self, query: str) -> list[dict[str, object]]:
        endpoint = f"{self.url}/search"
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.get(endpoint, params={"q": query, "format": "json"})
        except httpx.TimeoutException:
            raise ToolError(f"The search service at {self.url} did not answer in time") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"Could not reach the search service at {self.url}: {exc}") from None
        if response.status_code == 403:
            raise ToolError(
                f"The search service at {self.url} refused JSON output (HTTP 403); enable the "
                "json format in its settings (SearxNG: search.formats)"
            )
        if response.status_code >= 400:
            raise ToolError(
                f"The search service at {self.url} answered HTTP {response.status_code}"
            )
        try:
            payload = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ToolError(f"The search service at {self.url} did not return JSON") from None
        results = payload.get("results") if isinstance(payload, dict) else None
        if not isinstance(results, list):
            raise ToolError(f"The search service at {self.url} returned no 'results' list")
        return [item for item in results if isinstance(item, dict)]
