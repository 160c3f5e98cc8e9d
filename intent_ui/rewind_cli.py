"""`python -m intent_ui rewind list|show|restore`: checkpoints without the web app.

`list` prints every checkpoint (one line each: its id, when, the tool, how many files the
call changed, and "Rewind to before: <the call's label>"), of one conversation with
`--conversation`, or of one user's with `--user`. `show ID` prints what restoring it
would change, with a diff per file. `restore ID` does it, after asking (or at once with
`--yes`), files only, or with `--conversation-too` the conversation as well, as the
chat's two buttons do. An id may be shortened to any unique prefix of 6 or more
characters. The workspace is the configuration's (`--config`), the database the app's
(`DB_URL`, else `.data/intent_ui.db`). Docs: docs/rewind.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

# The admin commands answer with the same exit codes.
from intent_ui.users_cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from intent_ui.store.checkpoints import CheckpointRecord

__all__ = ["add_rewind_command", "run_rewind_command"]

MIN_PREFIX = 6


def add_rewind_command(commands: Any) -> None:
    """Register `rewind` on the CLI's subcommand parsers."""
    rewind = commands.add_parser(
        "rewind",
        help="list checkpoints and restore the workspace to before a tool call",
        description="List the checkpoints taken before workspace-changing tool calls, show "
        "what restoring one would change, and restore it.",
    )
    rewind.add_argument("--config", metavar="FILE", help="configuration file (intent_ui.yaml)")
    actions = rewind.add_subparsers(dest="rewind_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list the checkpoints, oldest first")
    listing.add_argument("--conversation", metavar="ID", help="only this conversation's")
    listing.add_argument("--user", metavar="NAME", help="only this user's conversations")
    show = actions.add_parser("show", help="show what restoring a checkpoint would change")
    show.add_argument("checkpoint", help="the checkpoint's id (or a unique prefix)")
    restore = actions.add_parser("restore", help="restore the workspace to before the call")
    restore.add_argument("checkpoint", help="the checkpoint's id (or a unique prefix)")
    restore.add_argument(
        "--conversation-too",
        action="store_true",
        help="also rewind the conversation: it goes on from before that call",
    )
    restore.add_argument("--yes", action="store_true", help="restore without asking")


def run_rewind_command(
    args: argparse.Namespace,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one `rewind` action; returns the exit code. The streams default to the
    process's, read when called."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    from intent_ui.agent.checkpoints import workspace_scanner
    from intent_ui.agent.rewind import RewindError, call_label, plan_rewind, rewind
    from intent_ui.config import ConfigError, load_config
    from intent_ui.core.checkpoints import RewindMode, rewind_label
    from intent_ui.store import checkpoints as checkpoint_store
    from intent_ui.store.db import StoreError, init_db

    def fail(message: str, code: int = EXIT_FAILED) -> int:
        print(f"intent_ui rewind: {message}", file=stderr)
        return code

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        return fail(f"invalid configuration in {exc.source}: {'; '.join(exc.problems)}", 2)
    try:
        engine = init_db(config.database_url)
        if args.rewind_command == "list":
            owner = _owner(engine, args.user) if args.user else None
            if args.user and owner is None:
                return fail(f"there is no user named {args.user!r}", EXIT_USAGE)
            records = checkpoint_store.all_checkpoints(engine, owner=owner)
            if args.conversation:
                records = [r for r in records if r.conversation_id == args.conversation]
            if not records:
                print("No checkpoints.", file=stdout)
            for record in records:
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created_at))
                label = rewind_label(call_label(engine, record.message_id, record.call_id))
                changed = len(record.changes)
                print(
                    f"{record.id[:12]}  {when}  {record.tool:<19} "
                    f"{changed} file{'s' if changed != 1 else ''}  {label}",
                    file=stdout,
                )
            return EXIT_OK
        found = _find(checkpoint_store.all_checkpoints(engine), args.checkpoint)
        if isinstance(found, str):
            return fail(found, EXIT_USAGE)
        scanner = workspace_scanner(config, engine)
        plan = plan_rewind(scanner, engine, found.conversation_id, found.message_id, found.call_id)
        print(rewind_label(plan.label), file=stdout)
        for note in plan.notes:
            print(f"Note: {note}", file=stdout)
        if not plan.files:
            print("No file needs changing: the workspace already is as it was.", file=stdout)
        for planned in plan.files:
            print(f"\n{planned.action}: {planned.path}", file=stdout)
            if planned.reason:
                print(f"  not restored: {planned.reason}", file=stdout)
            if planned.diff:
                print(planned.diff.rstrip("\n"), file=stdout)
        if args.rewind_command == "show":
            return EXIT_OK
        if not args.yes:
            if not stdin.isatty():
                return fail("not restored: pass --yes to restore without a terminal", 2)
            print("\nRestore? [y/N] ", end="", file=stdout, flush=True)
            if stdin.readline().strip().lower() not in ("y", "yes"):
                print("Nothing was changed.", file=stdout)
                return EXIT_OK
        mode: RewindMode = "all" if args.conversation_too else "files"
        done = rewind(
            scanner, engine, found.conversation_id, found.message_id, found.call_id, mode=mode
        )
    except RewindError as exc:
        return fail(str(exc))
    except StoreError as exc:
        return fail(str(exc))
    print(done.summary(), file=stdout)
    return EXIT_FAILED if done.refused else EXIT_OK


def _owner(engine: Engine, name: str) -> str | None:
    from intent_ui.store import users

    user = users.get_user_by_name(engine, name)
    return None if user is None else user.id


def _find(records: list[CheckpointRecord], wanted: str) -> CheckpointRecord | str:
    """The checkpoint an id or prefix names, or what is wrong with it."""
    wanted = wanted.strip().lower()
    if len(wanted) < MIN_PREFIX:
        return f"give at least {MIN_PREFIX} characters of the checkpoint's id (see `rewind list`)"
    matches = [record for record in records if record.id.startswith(wanted)]
    if not matches:
        return f"no checkpoint {wanted!r}; `python -m intent_ui rewind list` shows them"
    if len(matches) > 1:
        return f"{wanted!r} names {len(matches)} checkpoints; give more of the id"
    return matches[0]
