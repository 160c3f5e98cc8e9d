"""The demo model's reply once its tools have answered: what each round found, quoted
with the paths and counts the tools returned.

Searches are reported as counts per topic and the files they matched; a lookup by file
name lists the files it found; the file read for a step is named with why it was chosen
(named after the topic, or the top search hit) and, when the message asked for a summary
or did not name the file, summarised: its size, its opening sentence (docstring, first
paragraph or first line) and what it defines or which sections it has. A file the user
named is shown from its start. Failures are quoted. Everything is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from intent_ui.agent.providers.demo_plan import (
    Overview,
    Plan,
    Read,
    Result,
    best_match,
    find_tool,
    match_counts,
    readme_in,
    search_value,
    top_hit,
)
from intent_ui.core.pauses import DENIAL_LEAD
from intent_ui.core.text import clip

__all__ = ["compose_reply", "help_text", "summarise_file"]

_SHOWN_PATHS = 3
_SHOWN_NAMES = 4
_SHOWN_OUTPUT_LINES = 12


def compose_reply(plan: Plan, rounds: Sequence[Sequence[Result]]) -> str:
    """The reply for `plan` after its `rounds` of tool calls (the first round first)."""
    first = list(rounds[0]) if rounds else []
    everything = [result for batch in rounds for result in batch]
    chosen = _chosen_reads(plan, first)
    searches: list[str] = []
    lookups: list[str] = []
    reads: list[str] = []
    others: list[str] = []
    for result in everything:
        if result.is_error and result.content.startswith(DENIAL_LEAD):
            # The user's reason, when they gave one, follows the denial's first sentence.
            reason = result.content[len(DENIAL_LEAD) :].strip()
            others.append(f"You denied the {result.name} call, so I did not run it. {reason}")
        elif result.is_error:
            others.append(f"The {result.name} call failed: {_first_line(result.content)}")
        elif result.name.startswith("glob_search"):
            lookups.append(_lookup_summary(result))
        elif "search" in result.name:
            searches.append(_search_summary(result))
        elif result.name.startswith("read_file"):
            path = str(result.args.get("path", "the file"))
            why = chosen.get(path)
            if why:
                reads.append(why)
            summarise = plan.summary or why is not None
            reads.append(_read_summary(path, result.content, summarise))
        else:
            others.append(_other_summary(result))
    for ask in plan.asks:
        if isinstance(ask, Read) and ask.topic and best_match(ask.topic, first) is None:
            others.append(f"I found no file about {ask.topic}, so I read nothing for it.")
    paragraphs = ["I found " + _join(searches) + "."] if searches else []
    paragraphs += [*lookups, *reads, *others]
    if plan.summary:
        recap = _recap(everything)
        if recap:
            paragraphs.append(recap)
    return "\n\n".join(paragraphs) if paragraphs else "Done."


def _chosen_reads(plan: Plan, first: Sequence[Result]) -> dict[str, str]:
    """Why each file the second round read was chosen, by path."""
    why: dict[str, str] = {}
    counts = match_counts(first)
    for ask in plan.asks:
        if isinstance(ask, Read) and ask.path is None:
            path = best_match(ask.topic, first)
            if path is None:
                continue
            if ask.topic is None:
                hits = _count(counts.get(path, 0), "match")
                where = "" if path == top_hit(counts) else " outside the tests"
                why.setdefault(path, f"The top search hit{where} is `{path}` ({hits}).")
            elif ask.topic.lower() in PurePosixPath(path).name.lower():
                why.setdefault(path, f"The best match for {ask.topic} is `{path}`, named after it.")
            else:
                why.setdefault(
                    path, f"No file is named after {ask.topic}; `{path}` mentions it the most."
                )
        elif isinstance(ask, Overview):
            path = readme_in(first)
            if path is not None:
                why.setdefault(path, "")  # the README needs no reason, only a summary
    return why


_STOPPED = re.compile(r"^\[(?:stopped at \d+ matches|search stopped after)", re.MULTILINE)
_MATCH_LINE = re.compile(r"^(?P<path>[^\n:]+):\d+: ", re.MULTILINE)


def _search_summary(result: Result) -> str:
    target = search_value(result.args) or "your search"
    content = result.content
    paths = list(dict.fromkeys(m.group("path") for m in _MATCH_LINE.finditer(content)))
    count = len(_MATCH_LINE.findall(content))
    if count == 0:
        lines = [line for line in content.splitlines() if line.strip()]
        if not lines or content.startswith("No "):
            return f"no matches for {target}"
        return f"{_count(len(lines), 'result')} for {target}"
    more = "+" if _STOPPED.search(content) else ""
    noun = "match" if count == 1 and not more else "matches"
    return f"{count}{more} {noun} for {target} (in {_paths(paths)})"


def _lookup_summary(result: Result) -> str:
    files = [
        line.strip()
        for line in result.content.splitlines()
        if line.strip() and not line.startswith(("[", "No files"))
    ]
    pattern = str(result.args.get("pattern", ""))
    if not files:
        return f"No file matches `{pattern}`."
    return f"{_count(len(files), 'file')} match `{pattern}`: {_paths(files, code=True)}."


def _read_summary(path: str, content: str, summarise: bool) -> str:
    lines, total = _numbered_lines(content)
    if not lines:
        return f"`{path}` is empty."
    if not summarise:
        preview = "\n".join(lines[:8])
        # A fence longer than any the file holds, so its own fences cannot close it.
        fence = "`" * max([3, *(len(m) + 1 for m in re.findall(r"`{3,}", preview))])
        start = f"{fence}\n{preview}\n{fence}"
        return f"`{path}` has {_count(total, 'line')}; here is the start:\n\n{start}"
    return summarise_file(path, lines, total)


def summarise_file(path: str, lines: Sequence[str], total: int) -> str:
    """What a reader learns first about a file: size, opening sentence, what it holds."""
    suffix = PurePosixPath(path).suffix.lower()
    size = f"`{path}` has {_count(total, 'line')}"
    if suffix == ".py":
        opening = _python_opening(lines)
        classes = [m.group(1) for line in lines if (m := re.match(r"class (\w+)", line))]
        functions = [
            m.group(1) for line in lines if (m := re.match(r"(?:async\s+)?def (\w+)", line))
        ]
        defined = [
            part
            for part in (_names(classes, "class", "classes"), _names(functions, "function"))
            if part
        ]
        holds = f" It defines {' and '.join(defined)}." if defined else ""
        return f"{size}.{_quoted(opening)}{holds}"
    if suffix in (".md", ".markdown", ".rst", ".txt") or not suffix:
        title = next((m.group(1) for line in lines if (m := re.match(r"#\s+(.+)", line))), None)
        sections = [m.group(1).strip() for line in lines if (m := re.match(r"##\s+(.+)", line))]
        titled = f", titled “{title.strip()}”" if title else ""
        listed = f" Its sections: {_names(sections, '', bare=True)}." if sections else ""
        return f"{size}{titled}.{_quoted(_first_paragraph(lines))}{listed}"
    first = next((line.strip() for line in lines if line.strip()), "")
    return f"{size}.{_quoted(first)}"


def _recap(results: Sequence[Result]) -> str:
    """One sentence naming, per search, the file it matched most."""
    parts = []
    for result in results:
        if result.is_error or "search" not in result.name or result.name.startswith("glob"):
            continue
        counts = match_counts([result])
        top = top_hit(counts)
        if top is None:
            continue
        target = search_value(result.args) or "the search"
        parts.append(f"{target} most in `{top}` ({counts[top]} of {sum(counts.values())})")
    return f"In short: {_join(parts)}." if parts else ""


def _other_summary(result: Result) -> str:
    name, content, args = result.name, result.content, result.args
    if name.startswith("list_directory"):
        entries = [line.split("  (")[0] for line in content.splitlines() if line.strip()]
        # What a newcomer looks for first; hidden folders (.git, caches) go last.
        entries.sort(key=lambda entry: entry.startswith("."))
        shown = ", ".join(entries[:8]) + (", …" if len(entries) > 8 else "")
        where = args.get("path", ".")
        place = "The workspace" if where in (".", "./", "") else f"`{where}`"
        return f"{place} contains {_count(len(entries), 'entry', 'entries')}: {shown}"
    if name.startswith("ask_user_question"):
        return f"You answered: {_first_line(content)}"
    if name.startswith("set_memory"):
        return f"Noted: {args.get('key', 'that')} is {args.get('value', '')}."
    if name.startswith("subagent"):
        who = args.get("agent") or "The subagent"
        return f"{who} reported back: {_first_line(content)}"
    if name.startswith(("run_tools_with_code", "bash_tool")):
        lines = content.rstrip().splitlines()
        shown = "\n".join(lines[:_SHOWN_OUTPUT_LINES])
        more = "\n…" if len(lines) > _SHOWN_OUTPUT_LINES else ""
        return f"It printed:\n\n```\n{shown}{more}\n```"
    return f"Done: {_first_line(content)}"


# --- reading what a tool returned -------------------------------------------------------------

_NUMBERED = re.compile(r"^\s*\d+\t(?P<line>.*)$")
_SHOWING = re.compile(r"^\[showing lines \d+-\d+ of (?P<total>\d+);")


def _numbered_lines(content: str) -> tuple[list[str], int]:
    """`read_file`'s numbered lines without their numbers, and the file's line count."""
    lines: list[str] = []
    total = None
    for line in content.splitlines():
        if (numbered := _NUMBERED.match(line)) is not None:
            lines.append(numbered.group("line"))
        elif (showing := _SHOWING.match(line)) is not None:
            total = int(showing.group("total"))
    return lines, total if total is not None else len(lines)


def _python_opening(lines: Sequence[str]) -> str:
    """The first paragraph of the module docstring, else of the leading comments."""
    body = [line for line in lines if not line.startswith(("#!", "# -*-"))]
    start = next((i for i, line in enumerate(body) if line.strip()), None)
    if start is None:
        return ""
    head = body[start].lstrip()
    quote = next((q for q in ('"""', "'''") if head.lstrip("rRuUbB").startswith(q)), None)
    if quote is None:
        comments = []
        for line in body[start:]:
            if not line.startswith("#"):
                break
            comments.append(line.lstrip("# ").strip())
        return _paragraph(comments)
    text = head.lstrip("rRuUbB")[3:]
    collected = []
    for line in [text, *body[start + 1 :]]:
        end = line.find(quote)
        collected.append(line if end < 0 else line[:end])
        if end >= 0:
            break
    return _paragraph(collected)


def _first_paragraph(lines: Sequence[str]) -> str:
    """The first run of prose lines of a text file (no headings, fences, tables, HTML)."""
    collected: list[str] = []
    fenced = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            if collected:
                break
            continue
        prose = stripped and not stripped.startswith(("#", "|", "!", "<", "[!", "==", "--"))
        if fenced or not prose:
            if collected:
                break
            continue
        collected.append(stripped)
    return _paragraph(collected)


def _paragraph(lines: Sequence[str]) -> str:
    words: list[str] = []
    for line in lines:
        if not line.strip():
            if words:
                break
            continue
        words.append(line.strip())
    text = " ".join(words)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # [link](url) -> link
    text = re.sub(r"[*_`]{1,2}([^*_`]+)[*_`]{1,2}", r"\1", text)
    return _first_sentence(text)


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(?:\s|$)", text)
    return clip(match.group(1) if match else text, 240)


# --- wording ----------------------------------------------------------------------------------


def _quoted(text: str) -> str:
    return f" It begins: “{text}”" if text else ""


def _paths(paths: Sequence[str], *, code: bool = False) -> str:
    shown = [f"`{p}`" if code else p for p in paths[:_SHOWN_PATHS]]
    more = len(paths) - _SHOWN_PATHS
    return ", ".join(shown) + (f" and {_count(more, 'more file')}" if more > 0 else "")


def _names(
    names: Sequence[str], noun: str, plural: str | None = None, *, bare: bool = False
) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:_SHOWN_NAMES])
    more = len(names) - _SHOWN_NAMES
    listed = shown + (f" and {more} more" if more > 0 else "")
    return listed if bare else f"{_count(len(names), noun, plural)} ({listed})"


def _count(n: int, noun: str, plural: str | None = None) -> str:
    if n == 1:
        return f"1 {noun}"
    return f"{n} {plural or (noun + 'es' if noun.endswith(('ch', 'sh', 's', 'x')) else noun + 's')}"


def _first_line(text: str) -> str:
    line = next((line for line in text.splitlines() if line.strip()), "").strip()
    return clip(line, 160)


def _join(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# --- nothing to run ---------------------------------------------------------------------------

_EXAMPLES: dict[str, str] = {
    "grep_search": "find where OAuth and MCP are handled",
    "search_code": "search the repo for OAuth and MCP",
    "glob_search": "find where OAuth and MCP are handled, then read the session module and "
    "summarize",
    "list_directory": "what does this project do?",
    "read_file": "read README.md",
    "set_memory": "remember the deadline is Friday",
    "write_file": "write hello world to notes.txt",
    "run_tools_with_code": "count the TODOs with code",
    "bash_tool": "run `ls -la` in bash",
    "delete_file": "delete notes.txt",
    "ask_user_question": "ask me which database to use: Postgres or SQLite",
    "subagent": "delegate the audit of the callback router",
}


def help_text(offered: Mapping[str, Mapping[str, Any]]) -> str:
    """What the demo can do with the `offered` tools."""
    lines = [
        "I'm the offline demo model: I plan real tool calls over your workspace and "
        "stream them like a provider would."
    ]
    examples = [
        example for base, example in _EXAMPLES.items() if find_tool(offered, base) is not None
    ]
    if examples:
        lines.append("Try one of these:")
        lines.extend(f"- {example}" for example in examples)
    else:
        lines.append("No tools are enabled for this chat, so there is nothing I can run.")
    return "\n".join(lines)
