"""How the offline demo model reads a message and plans its tool calls, round by round.

A message becomes steps: it is split on "then", on semicolons, and on a comma or "and"
that starts a new action ("..., read the session module and summarize"), never inside
quotes and never between two topics ("OAuth and MCP"). Each step is one `Ask`:

- `Search`: "find where X and Y are handled", "where is X", "search (the repo) for X",
  "look for X", "grep X", "find X": one search per topic, run in parallel;
- `Read`: "read <path>" reads that file; "read the session module" first looks for a
  file named after the topic, then reads the best match; "read it" reads the top search
  hit; "summarize/explain <something>", "what does <something> do?" and "how does
  <something> work?" read it the same way and summarise it;
- `ListFolder`: "list <folder>", "list the files", "what files ...";
- `Overview`: "what does this project do?", "what is this?": lists the workspace, then
  reads its README;
- `Remember` ("remember X is Y") and `Write` ("write <text> to <path>");
- `CountWithCode` ("count the TODOs with code", "use code to count X"): one
  `run_tools_with_code` program; it calls `grep_search` through the bridge when the
  runner lists it among the functions code may call, else reads the workspace itself;
- `Program` ("run `print(2 + 2)` in python", "run the python `...`"): one
  `run_tools_with_code` call running that one line as written;
- `Shell` ("run `ls -la`", "run `git log` in bash"): one `bash_tool` call;
- `Delete` ("delete migrations/staging", "delete the staging migrations in
  migrations/staging"): one `delete_file` call (a path without a file extension is
  deleted as a folder, with everything in it);
- `Question` ("ask me which database to use: Postgres or SQLite"): one
  `ask_user_question` call, offering the answers after the colon;
- `Delegate` ("delegate the audit of the callback router", "... to Auditor"): one
  `subagent` call, to the saved agent named after "to", else to a copy of itself. An
  audit, review or study of a topic asks the child to search for it and read the top
  hit; any other task is passed on as written.

Rounds: the first holds every call that needs nothing found first (searches, lookups,
listings, reads of a named file, memory, writes); the second reads the best match of
what the first found (`second_round`). Tool names are the ones the request offers, and a
step whose tool is not offered is left out. Everything is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property

__all__ = [
    "Ask",
    "CountWithCode",
    "Delegate",
    "Delete",
    "ListFolder",
    "Overview",
    "Plan",
    "PlannedCall",
    "Program",
    "Question",
    "Read",
    "Remember",
    "Result",
    "Search",
    "Shell",
    "Write",
    "best_match",
    "call_for",
    "count_program",
    "find_tool",
    "first_round",
    "found_files",
    "glob_pattern",
    "literal_pattern",
    "match_counts",
    "parse",
    "properties",
    "readme_in",
    "search_arg",
    "search_value",
    "second_round",
    "split_steps",
    "top_hit",
]

MAX_TOPICS = 4
"""Searches one step asks for at most (the rest of a long list is left out)."""


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One tool call the demo model decided to make. `args` keep insertion order."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Result:
    """A call of an earlier round of this turn, with what its tool returned."""

    name: str
    args: Mapping[str, Any]
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Search:
    topics: tuple[str, ...]
    noun: str | None = None  # "handling" for "where is X handled"; None: "Searching for X"
    code: bool = False  # the message names the repo or code search


@dataclass(frozen=True, slots=True)
class Read:
    """`path` when the file is named; else `topic` ("session" of "the session module");
    neither: the top search hit. `summary` when the step asks to summarise or explain."""

    path: str | None = None
    topic: str | None = None
    noun: str = "file"
    summary: bool = False


@dataclass(frozen=True, slots=True)
class ListFolder:
    path: str = "."


@dataclass(frozen=True, slots=True)
class Overview:
    pass


@dataclass(frozen=True, slots=True)
class Remember:
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class Write:
    path: str
    content: str


@dataclass(frozen=True, slots=True)
class CountWithCode:
    """Count the lines mentioning `term` across the workspace, in one program."""

    term: str


@dataclass(frozen=True, slots=True)
class Program:
    """Run `code`, one line of Python the message quoted, as written."""

    code: str


@dataclass(frozen=True, slots=True)
class Shell:
    command: str


@dataclass(frozen=True, slots=True)
class Delete:
    """Delete `path`; `what` is how the message named it ("the staging migrations")."""

    path: str
    what: str


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Delegate:
    """Hand `what` ("the audit of the callback router") to a subagent: `task` is what the
    child reads, `agent` the saved agent named (None: a copy of itself)."""

    what: str
    task: str
    agent: str | None = None


Ask = (
    Search
    | Read
    | ListFolder
    | Overview
    | Remember
    | Write
    | CountWithCode
    | Program
    | Shell
    | Delete
    | Question
    | Delegate
)


@dataclass(frozen=True, slots=True)
class Plan:
    """The steps of one message; `summary` when the reply should summarise."""

    asks: tuple[Ask, ...] = ()
    summary: bool = False


# --- reading the message -----------------------------------------------------------------

_QUOTES = "\"'`“”‘’"
_ACTIONS = (
    r"read|open|cat|show|list|ls|search|find|grep|look|hunt|locate|summari[sz]e|explain|"
    r"describe|tell|remember|write|give|delete|remove|ask|delegate"
)
_STEP_BREAK = re.compile(
    rf"\s*(?:,\s*)?(?:\band\s+)?\bthen\b\s*|\s*;\s*|\s*,?\s*\band\b\s*(?=(?:{_ACTIONS})\b)"
    rf"|\s*,\s*(?=(?:{_ACTIONS})\b)",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|`[^`]*`|'[^']*'(?!\w)")
_LEAD = re.compile(
    r"^(?:(?:and|also|please|first|next|finally|now|so|can\s+you|could\s+you)\b[\s,]*)+", re.I
)

_NOUNS = {
    "handled": "handling",
    "defined": "definitions",
    "used": "usage",
    "implemented": "implementation",
    "configured": "configuration",
    "tested": "tests",
    "called": "calls",
    "wired": "wiring",
    "set up": "setup",
    "loaded": "loading",
    "stored": "storage",
    "saved": "saving",
    "created": "creation",
    "parsed": "parsing",
    "validated": "validation",
    "checked": "checks",
    "rendered": "rendering",
    "started": "startup",
    "registered": "registration",
    "logged": "logging",
    "sent": "sending",
    "built": "building",
}
_VERBS = "|".join(_NOUNS)
_WHERE = re.compile(
    r"\bwhere\s+(?:(?:are|is|do|does)\s+)?(?:the\s+)?(?P<topics>.+?)"
    rf"(?:\s+(?:are|is|get|gets|being)?\s*(?P<verb>{_VERBS}))?$",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    r"^(?:search|grep|look|hunt)\s+(?:(?:through|in|across)\s+)?"
    r"(?:(?:the|this|my|our)\s+)?(?:(?:repo|repository|codebase|code|github|workspace|project|"
    r"files?)\s+)?(?:for\s+)(?P<topics>.+)$",
    re.IGNORECASE,
)
_GREP = re.compile(r"^(?:grep|find|locate)\s+(?:all\s+|every\s+)?(?:the\s+)?(?P<topics>.+)$", re.I)
_CODE_SEARCH_HINT = re.compile(r"\b(?:repo|repository|github|code\s*search|codebase)\b", re.I)
_OVERVIEW = re.compile(
    r"\b(?:what\s+(?:does|is)|what'?s|tell\s+me\s+about|explain|describe|summari[sz]e|"
    r"overview\s+of|introduce)\s+(?:this|the|my|our)\s+"
    r"(?:project|repo|repository|codebase|code\s*base|app|workspace)\b"
    r"|^(?:give\s+me\s+)?(?:an?\s+)?(?:overview|tour)$|^what(?:\s+is|'?s)\s+this$",
    re.IGNORECASE,
)
_READ = re.compile(
    r"^(?P<verb>read|open|cat|show(?:\s+me)?|look\s+at|summari[sz]e|explain|describe)\s+"
    r"(?:the\s+(?:contents?\s+of\s+)?)?(?P<what>.+)$",
    re.IGNORECASE,
)
_SUMMARY = re.compile(
    r"^(?:summari[sz]e|explain|describe|tell\s+me|give\s+(?:me\s+)?a\s+summary|recap|sum\s+up)"
    r"\b(?:\s+(?:it|them|that|this|those|what\s+you\s+(?:found|read)|the\s+results?|"
    r"everything|all\s+of\s+(?:it|this)))?$",
    re.IGNORECASE,
)
_TOP_HIT = re.compile(
    r"^(?:it|that|this|them|those|(?:that|the)\s+file|(?:the\s+)?(?:best|top|first)\s+"
    r"(?:match|hit|result|one|file)(?:es|s)?|what\s+you\s+found|(?:the\s+)?results?)$",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"^(?:what\s+(?:does|do)\s+(?P<does>.+?)\s+do|how\s+(?:does|do)\s+(?P<works>.+?)\s+work"
    r"|what\s+is\s+(?:in\s+)?(?P<is>.+))$",
    re.IGNORECASE,
)
_LISTING_WORDS = re.compile(r"^(?:all\s+)?(?:the\s+)?(?:files|contents|entries|folders)\b", re.I)
_PATH = re.compile(r"^(?:\./|~/|/)?[\w.\-]+(?:/[\w.\-]+)*/?$")
_FILE_NAME = re.compile(r"(?:^|/)[\w\-]*\.[A-Za-z0-9]{1,8}$|/")
_KIND_NOUNS = re.compile(
    r"\s+(?:module|modules|file|files|source|code|class|classes|implementation|script|"
    r"package|component|page)$",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"^(?:list|ls|show(?:\s+me)?)(?:\s+(?:all\s+)?(?:the\s+)?(?:files|contents|entries)"
    r"(?:\s+(?:in|of|under))?)?"
    r"(?:\s+(?:the\s+)?(?:folder|directory|dir)?\s*(?P<path>[\w./\\~-]+))?$",
    re.IGNORECASE,
)
_WHAT_FILES = re.compile(
    r"\b(?:what|which)\s+files\b(?:.*\b(?:in|under)\s+(?P<path>[\w./\\~-]+))?", re.I
)
_REMEMBER = re.compile(
    r"^remember\s+(?:that\s+)?(?:(?:my|the|our)\s+)?(?P<key>.+?)\s+(?:is|are|=)\s+(?P<value>.+)$",
    re.IGNORECASE,
)
_WRITE = re.compile(
    r"^write\s+(?P<content>.+?)\s+(?:to|into)\s+(?:the\s+)?(?:file\s+)?(?P<path>[\w./\\~-]+)$",
    re.IGNORECASE,
)
_COUNT_WITH_CODE = re.compile(
    r"^(?:(?:use|write|run)\s+(?:a\s+)?(?:python\s+)?(?:code|program|script)\s+to\s+count\s+"
    r"(?P<what>.+)|count\s+(?P<counted>.+?)\s+(?:with|using|in)\s+(?:a\s+)?(?:python\s+)?"
    r"(?:code|program|script))$",
    re.IGNORECASE,
)
_PROGRAM = re.compile(
    r"^run\s+(?:the\s+)?python\s+(?:program\s+|code\s+)?`(?P<code>[^`]+)`$"
    r"|^run\s+`(?P<inline>[^`]+)`\s+(?:in|with)\s+python$",
    re.IGNORECASE,
)
_SHELL = re.compile(
    r"^run\s+(?:the\s+)?(?:(?:shell|bash)\s+)?(?:command\s+)?`(?P<command>[^`]+)`"
    r"(?:\s+in\s+(?:bash|the\s+shell|the\s+sandbox))?$",
    re.IGNORECASE,
)
_WHOLE_WORKSPACE = {"files", "everything", "here", "all", "workspace", "."}


def parse(message: str) -> Plan:
    """The steps `message` asks for (none when it asks for nothing the demo can do)."""
    asks: list[Ask] = []
    summary = False
    for clause in split_steps(message):
        if _SUMMARY.match(clause):
            summary = True
            continue
        ask = _ask(clause)
        if ask is None:
            continue
        if (isinstance(ask, Read) and ask.summary) or isinstance(ask, Overview):
            summary = True
        if ask not in asks:
            asks.append(ask)
    return Plan(tuple(asks), summary)


def split_steps(message: str) -> list[str]:
    """`message` cut into its steps, each without leading fillers and final punctuation."""
    text = " ".join(str(message or "").split())
    quoted = [m.span() for m in _QUOTED.finditer(text)]
    pieces, start = [], 0
    for match in _STEP_BREAK.finditer(text):
        if any(a <= match.start() < b for a, b in quoted):
            continue
        pieces.append(text[start : match.start()])
        start = match.end()
    pieces.append(text[start:])
    steps = []
    for piece in pieces:
        piece = _LEAD.sub("", piece.strip(" ,;")).rstrip("?.!, ").strip()
        if piece:
            steps.append(piece)
    return steps


def _ask(clause: str) -> Ask | None:
    if _OVERVIEW.search(clause):
        return Overview()
    for parser in (
        _delegate,
        _count_with_code,
        _program,
        _shell,
        _remember,
        _write,
        _delete,
        _ask_user,
        _search,
        _read,
        _list,
        _question,
    ):
        ask = parser(clause)
        if ask is not None:
            return ask
    return None


_DELEGATE = re.compile(
    r"^(?:delegate|hand\s+off):?\s+(?P<what>.+?)(?:\s+to\s+(?:the\s+)?(?P<agent>[\w-]+)"
    r"(?:\s+agent)?)?$",
    re.IGNORECASE,
)
_STUDY = re.compile(
    r"^(?:(?:the|an?)\s+)?(?:audit|review|study|analysis|inspection|check)\s+of\s+"
    r"(?:the\s+)?(?P<topic>.+)$",
    re.IGNORECASE,
)


def _delegate(clause: str) -> Ask | None:
    match = _DELEGATE.match(clause)
    if match is None:
        return None
    what = match.group("what").strip(_QUOTES + " ")
    study = _STUDY.match(what)
    task = f"search for {study.group('topic')}, then read it" if study else what
    return Delegate(what, task, match.group("agent")) if what else None


def _count_with_code(clause: str) -> Ask | None:
    match = _COUNT_WITH_CODE.match(clause)
    if match is None:
        return None
    what = _clean_topic(match.group("what") or match.group("counted") or "")
    # "TODOs" counts the lines that say "TODO".
    if len(what) > 2 and what.endswith("s") and what[:-1].isupper():
        what = what[:-1]
    return CountWithCode(what) if what else None


def _program(clause: str) -> Ask | None:
    match = _PROGRAM.match(clause)
    code = (match.group("code") or match.group("inline") or "").strip() if match else ""
    return Program(code) if code else None


def _shell(clause: str) -> Ask | None:
    match = _SHELL.match(clause)
    command = match.group("command").strip() if match else ""
    return Shell(command) if command else None


def _remember(clause: str) -> Ask | None:
    match = _REMEMBER.match(clause)
    if match is None:
        return None
    key = match.group("key").strip(_QUOTES + " ")
    value = match.group("value").strip(_QUOTES + " ")
    return Remember(key, value) if key and value else None


def _write(clause: str) -> Ask | None:
    match = _WRITE.match(clause)
    if match is None:
        return None
    return Write(match.group("path").strip(_QUOTES), match.group("content").strip(_QUOTES + " "))


_DELETE = re.compile(
    r"^(?:delete|remove)\s+(?:(?P<what>the\s+.+?)\s+(?:in|at|under)\s+)?(?P<path>[\w./\\~-]+)$",
    re.IGNORECASE,
)
_ASK_USER = re.compile(r"^ask\s+(?:me|the\s+user)\s+(?P<question>.+)$", re.IGNORECASE)


def _delete(clause: str) -> Ask | None:
    match = _DELETE.match(clause)
    if match is None:
        return None
    path = match.group("path").strip(_QUOTES)
    what = (match.group("what") or "").strip() or path
    return Delete(path, what) if path not in (".", "./") else None


def _ask_user(clause: str) -> Ask | None:
    match = _ASK_USER.match(clause)
    if match is None:
        return None
    question, _colon, offered = match.group("question").partition(":")
    choices = tuple(
        choice.strip(_QUOTES + " ")
        for choice in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", offered)
        if choice.strip(_QUOTES + " ")
    )
    question = question.strip(_QUOTES + " ").rstrip("?")
    if not question:
        return None
    return Question(question[0].upper() + question[1:] + "?", choices)


def _search(clause: str) -> Ask | None:
    noun = None
    # "search for X": X as written, even when it holds "where".
    match = _SEARCH.match(clause)
    if match is None and (match := _WHERE.search(clause)) is not None:
        verb = match.group("verb")
        noun = _NOUNS.get(verb.lower(), "handling") if verb else "handling"
    match = match or _GREP.match(clause)
    if match is None:
        return None
    topics = _topics(match.group("topics"))
    if not topics:
        return None
    return Search(topics, noun, bool(_CODE_SEARCH_HINT.search(clause)))


def _topics(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for part in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", text):
        # "the session module" searches for "session"; a lone "module" stays as written.
        topic = _clean_topic(_KIND_NOUNS.sub("", part)) or _clean_topic(part)
        if topic and topic.lower() not in (t.lower() for t in found):
            found.append(topic)
    return tuple(found[:MAX_TOPICS])


def _clean_topic(text: str) -> str:
    text = text.strip().strip(_QUOTES).strip()
    text = re.sub(r"^(?:the|all|every|any)\s+", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\s+(?:are|is|get|gets)$", "", text, flags=re.IGNORECASE)
    return text.strip(_QUOTES + " ")


def _read(clause: str) -> Ask | None:
    match = _READ.match(clause)
    if match is None:
        return None
    verb = match.group("verb").lower()
    summary = verb.startswith(("summari", "explain", "describe"))
    what = re.sub(r"^(?:file|folder)\s+", "", match.group("what").strip(), flags=re.I)
    what = what.strip(_QUOTES + " ")
    if not what:
        return None
    if verb.startswith("show") and _LISTING_WORDS.match(what):
        return None  # "show me the files in docs" is a listing
    return _read_of(what, summary)


def _read_of(what: str, summary: bool) -> Read | None:
    """A read of `what`: a path, a topic to find a file by, or the top search hit."""
    if _TOP_HIT.match(what):
        return Read(summary=summary)
    if _PATH.match(what) and _FILE_NAME.search(what):
        return Read(path=what, summary=summary)
    noun_match = _KIND_NOUNS.search(what)
    noun = noun_match.group(0).strip().lower() if noun_match else "file"
    topic = _clean_topic(_KIND_NOUNS.sub("", what))
    if not topic or topic.lower() in _WHOLE_WORKSPACE:
        return None
    return Read(topic=topic, noun=noun, summary=summary)


def _question(clause: str) -> Ask | None:
    """ "what does the session module do?", "how does the run loop work?": read the file
    about it and summarise it."""
    match = _QUESTION.match(clause)
    if match is None:
        return None
    what = next(group for group in match.groups() if group is not None)
    what = re.sub(r"^(?:the\s+)?(?:file\s+)?", "", what.strip(_QUOTES + " "), flags=re.I)
    return _read_of(what.strip(_QUOTES + " "), summary=True) if what else None


def _list(clause: str) -> Ask | None:
    match = _LIST.match(clause) or _WHAT_FILES.search(clause)
    if match is None:
        return None
    path = (match.group("path") or ".").strip(_QUOTES)
    return ListFolder("." if path.lower() in _WHOLE_WORKSPACE or path == "./" else path)


# --- the rounds ------------------------------------------------------------------------------

_SEARCH_ARG_NAMES = ("query", "q", "pattern", "search", "text", "keyword")
_README = re.compile(r"^readme(?:\.(?:md|rst|txt|markdown))?$", re.IGNORECASE)
_MANIFESTS = ("pyproject.toml", "package.json", "Cargo.toml", "go.mod", "setup.py")


def first_round(plan: Plan, offered: Mapping[str, Mapping[str, Any]]) -> list[PlannedCall]:
    """The calls that need nothing found first, in the order the steps ask for them."""
    calls: list[PlannedCall] = []
    searched: set[str] = set()
    for ask in plan.asks:
        if isinstance(ask, Search):
            calls.extend(_searches(ask, offered, searched))
        elif isinstance(ask, Read):
            calls.extend(_first_read(ask, offered, searched))
        elif isinstance(ask, ListFolder):
            calls.extend(_listing(ask.path, offered))
        elif isinstance(ask, Overview):
            listing = _listing(".", offered)
            calls.extend(listing or _reading("README.md", offered))
        elif isinstance(ask, CountWithCode):
            tool = find_tool(offered, "run_tools_with_code")
            if tool is not None:
                intent = f"Counting the lines that mention {ask.term} with a program"
                calls.append(call_for(tool, intent, {"code": count_program(ask.term, tool)}))
        elif isinstance(ask, Program):
            tool = find_tool(offered, "run_tools_with_code")
            if tool is not None:
                intent = f"Running {ask.code} in the Python sandbox"
                calls.append(call_for(tool, intent, {"code": ask.code}))
        elif isinstance(ask, Shell):
            tool = find_tool(offered, "bash_tool")
            if tool is not None:
                intent = f"Running {ask.command} in the sandbox"
                calls.append(call_for(tool, intent, {"command": ask.command}))
        elif isinstance(ask, Delete):
            tool = find_tool(offered, "delete_file")
            if tool is not None:
                args = {"path": ask.path, "recursive": not PurePosixPath(ask.path).suffix}
                calls.append(call_for(tool, f"Deleting {ask.what}", args))
        elif isinstance(ask, Question):
            tool = find_tool(offered, "ask_user_question")
            if tool is not None:
                lead = ask.question.rstrip("?")
                intent = f"Asking {lead[0].lower()}{lead[1:]}"
                asked: dict[str, Any] = {"question": ask.question}
                if ask.choices:
                    asked["choices"] = list(ask.choices)
                calls.append(call_for(tool, intent, asked))
        elif isinstance(ask, Delegate):
            tool = find_tool(offered, "subagent")
            if tool is not None:
                handed: dict[str, Any] = {"task": ask.task}
                if ask.agent:
                    handed["agent"] = ask.agent
                calls.append(call_for(tool, f"Delegating {ask.what}", handed))
        elif isinstance(ask, Remember):
            tool = find_tool(offered, "set_memory")
            if tool is not None:
                intent = f"Remembering that {ask.key} is {ask.value}"
                calls.append(call_for(tool, intent, {"key": ask.key, "value": ask.value}))
        else:
            tool = find_tool(offered, "write_file")
            if tool is not None:
                args = {"path": ask.path, "content": ask.content + "\n"}
                calls.append(call_for(tool, f"Writing {ask.path}", args))
    return _unique(calls)


def second_round(
    plan: Plan, offered: Mapping[str, Mapping[str, Any]], found: Sequence[Result]
) -> list[PlannedCall]:
    """Reads of the best matches of what the first round `found`."""
    paths: list[str] = []
    already = {str(r.args.get("path")) for r in found if r.name.startswith("read_file")}
    for ask in plan.asks:
        path = None
        if isinstance(ask, Read) and ask.path is None:
            path = best_match(ask.topic, found)
        elif isinstance(ask, Overview) and not already:
            path = readme_in(found)
        if path is not None and path not in paths and path not in already:
            paths.append(path)
    return [call for path in paths for call in _reading(path, offered)]


def _searches(
    ask: Search, offered: Mapping[str, Mapping[str, Any]], searched: set[str]
) -> list[PlannedCall]:
    code_search = find_tool(offered, "search_code")
    grep = find_tool(offered, "grep_search")
    calls = []
    for topic in ask.topics:
        if topic.lower() in searched:
            continue
        intent = f"Searching for {topic} {ask.noun}" if ask.noun else f"Searching for {topic}"
        if code_search is not None and ask.code:
            calls.append(call_for(code_search, intent, {search_arg(code_search): topic}))
        elif grep is not None:
            calls.append(call_for(grep, intent, {"pattern": literal_pattern(topic)}))
        else:
            continue
        searched.add(topic.lower())
    return calls


def _first_read(
    ask: Read, offered: Mapping[str, Mapping[str, Any]], searched: set[str]
) -> list[PlannedCall]:
    if ask.path is not None:
        return _reading(ask.path, offered)
    if ask.topic is None or find_tool(offered, "read_file") is None:
        return []  # the top hit of the searches, read in the second round
    glob = find_tool(offered, "glob_search")
    if glob is not None:
        intent = f"Looking for the {ask.topic} {ask.noun}"
        return [call_for(glob, intent, {"pattern": glob_pattern(ask.topic)})]
    return _searches(Search((ask.topic,)), offered, searched)


def _listing(path: str, offered: Mapping[str, Mapping[str, Any]]) -> list[PlannedCall]:
    tool = find_tool(offered, "list_directory")
    if tool is None:
        return []
    intent = (
        "Listing the workspace files" if path in (".", "./") else f"Listing the files in {path}"
    )
    return [call_for(tool, intent, {"path": path})]


def _reading(path: str, offered: Mapping[str, Mapping[str, Any]]) -> list[PlannedCall]:
    tool = find_tool(offered, "read_file")
    return [] if tool is None else [call_for(tool, f"Reading {path}", {"path": path})]


def _unique(calls: list[PlannedCall]) -> list[PlannedCall]:
    out: list[PlannedCall] = []
    for call in calls:
        if all(call.name != seen.name or call.args != seen.args for seen in out):
            out.append(call)
    return out


_BRIDGED_GREP = re.compile(r"^- grep_search\(", re.MULTILINE)


def count_program(term: str, runner: Mapping[str, Any]) -> str:
    """The program counting the lines that mention `term`: through `grep_search` when the
    runner's description lists it as a function code may call, else by reading the
    workspace (the program's working folder) itself."""
    report = (
        "total = sum(counts.values())\n"
        "lines = 'line mentions' if total == 1 else 'lines mention'\n"
        "files = 'file' if len(counts) == 1 else 'files'\n"
        "print(f'{total} {lines} {term} in {len(counts)} {files}')\n"
        "for path, count in sorted(counts.items(), key=lambda item: -item[1])[:5]:\n"
        "    print(f'- {path}: {count}')\n"
    )
    if _BRIDGED_GREP.search(str(runner.get("description") or "")):
        return (
            f"term = {term!r}\n"
            f"found = grep_search({literal_pattern(term)!r}, max_results=2000)\n"
            "counts = {}\n"
            "for line in found.splitlines():\n"
            "    path, colon, rest = line.partition(':')\n"
            "    if colon and rest[:1].isdigit():\n"
            "        counts[path] = counts.get(path, 0) + 1\n"
        ) + report
    return (
        "import os\n"
        f"term = {term!r}\n"
        "counts = {}\n"
        "for folder, dirs, files in os.walk('.'):\n"
        "    dirs[:] = sorted(d for d in dirs if not d.startswith('.') and d != 'node_modules')\n"
        "    for name in files:\n"
        "        path = os.path.join(folder, name)[2:]\n"
        "        try:\n"
        "            with open(path, encoding='utf-8') as file:\n"
        "                count = sum(term.lower() in line.lower() for line in file)\n"
        "        except (OSError, UnicodeDecodeError):\n"
        "            continue\n"
        "        if count:\n"
        "            counts[path] = count\n"
    ) + report


# --- what the first round found -------------------------------------------------------------

_MATCH_LINE = re.compile(r"^(?P<path>[^\n:]+):\d+: ", re.MULTILINE)


def match_counts(results: Sequence[Result]) -> dict[str, int]:
    """Search matches per file over every search result, in the order files appeared."""
    counts: dict[str, int] = {}
    for result in results:
        if result.is_error or "search" not in result.name:
            continue
        for match in _MATCH_LINE.finditer(result.content):
            path = match.group("path")
            counts[path] = counts.get(path, 0) + 1
    return counts


def found_files(results: Sequence[Result]) -> list[str]:
    """The paths a `glob_search` listed, in its order."""
    paths: list[str] = []
    for result in results:
        if result.is_error or not result.name.startswith("glob_search"):
            continue
        for line in result.content.splitlines():
            line = line.strip()
            if line and not line.startswith(("[", "No files")) and line not in paths:
                paths.append(line)
    return paths


def best_match(topic: str | None, results: Sequence[Result]) -> str | None:
    """The file to read. For a topic: a file named after it (from its lookup or its
    search), else the file its search matched most; without one: the file the searches
    matched most (the first to appear on a tie)."""
    if topic is None:
        counts = match_counts(results)
        outside_tests = {p: n for p, n in counts.items() if not _is_test(p)}
        return top_hit(outside_tests or counts)
    wanted = topic.lower()
    lookups = [r for r in results if r.args.get("pattern") == glob_pattern(topic)]
    searches = [r for r in results if (search_value(r.args) or "").lower() == wanted]
    counts = match_counts(searches)
    candidates = list(dict.fromkeys([*found_files(lookups), *counts]))
    if not candidates:
        return None
    words = "_".join(wanted.split())

    def rank(path: str) -> tuple[int, int, int, int, str]:
        pure = PurePosixPath(path)
        stem = pure.stem.lower()
        if stem in (words, words + "s") or stem + "s" == words:
            named = 0
        elif words in stem:
            named = 1
        else:
            named = 2
        return (named, int(_is_test(path)), -counts.get(path, 0), len(pure.parts), path)

    return min(candidates, key=rank)


def top_hit(counts: Mapping[str, int]) -> str | None:
    """The file with the most matches (the first to appear on a tie)."""
    order = {path: index for index, path in enumerate(counts)}
    return min(counts, key=lambda p: (-counts[p], order[p])) if counts else None


def _is_test(path: str) -> bool:
    return any(part.startswith("test") for part in PurePosixPath(path).parts)


def glob_pattern(topic: str) -> str:
    """The `glob_search` pattern that finds the files named after `topic`."""
    return "**/*" + "*".join(topic.lower().split()) + "*"


def readme_in(results: Sequence[Result]) -> str | None:
    """The README (else a package manifest) a listing of the workspace shows."""
    for result in results:
        if result.is_error or not result.name.startswith("list_directory"):
            continue
        if str(result.args.get("path", ".")) not in (".", "./", ""):
            continue
        names = [line.split("  (")[0].strip() for line in result.content.splitlines()]
        files = [name for name in names if name and not name.endswith("/")]
        readme = next((name for name in files if _README.match(name)), None)
        if readme is not None:
            return readme
        return next((name for name in _MANIFESTS if name in files), None)
    return None


# --- tool definitions ------------------------------------------------------------------------


def call_for(tool: Mapping[str, Any], intent: str, args: dict[str, Any]) -> PlannedCall:
    """Arguments in wire order: the intent first, and only when the schema asks for it."""
    ordered: dict[str, Any] = {}
    if is_intent_label_property(properties(tool).get(INTENT_ARG)):
        ordered[INTENT_ARG] = intent
    ordered.update(args)
    return PlannedCall(str(tool.get("name")), ordered)


def properties(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    params = tool.get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def find_tool(offered: Mapping[str, Mapping[str, Any]], base: str) -> Mapping[str, Any] | None:
    """The offered tool named `base`, or one whose model-facing name extends it."""
    if base in offered:
        return offered[base]
    for name in sorted(offered):
        if name.startswith(base + "_") or name.endswith("_" + base) or name.endswith("." + base):
            return offered[name]
    return None


def search_arg(tool: Mapping[str, Any]) -> str:
    """The argument a search tool takes its query in."""
    props = properties(tool)
    for name in _SEARCH_ARG_NAMES:
        if name in props:
            return name
    params = tool.get("parameters")
    required = params.get("required") if isinstance(params, Mapping) else None
    for name in required or ():
        if name != INTENT_ARG and name in props:
            return str(name)
    return next((str(name) for name in props if name != INTENT_ARG), "query")


def search_value(args: Mapping[str, Any]) -> str | None:
    """What a search call looked for, as the user wrote it (regex escapes removed)."""
    for name in _SEARCH_ARG_NAMES:
        value = args.get(name)
        if isinstance(value, str) and value:
            return re.sub(r"\\(.)", r"\1", value)
    return None


_REGEX_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")


def literal_pattern(text: str) -> str:
    """`text` as a regex matching itself. Unlike `re.escape`, spaces stay as written: the
    pattern is also the outcome's label, where an escaped space shows as a backslash."""
    return _REGEX_SPECIAL.sub(r"\\\1", text)
