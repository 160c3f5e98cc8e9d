"""`python -m intent_ui users add|passwd|signout|list`: manage the users of password mode.

The password is read without echo from the terminal (asked twice), or as the first line
of standard input when it is piped (`printf '%s\\n' "$PW" | python -m intent_ui users add
alice`), so it never appears in the process list or the shell history; it needs at least
twelve characters. `signout NAME` ends every session of that user, on every device (a new
password does too). Users go into the database the app uses (`DB_URL`, else
`.data/intent_ui.db`).
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["add_users_command", "run_users_command"]

# Shared with `rewind_cli`: every admin command answers with these.
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def add_users_command(commands: Any) -> None:
    """Register `users` on the CLI's subcommand parsers."""
    users = commands.add_parser(
        "users",
        help="add users, change passwords, end sessions, list users (auth mode: password)",
        description="Manage the users who sign in with a password (auth: {mode: password}).",
    )
    actions = users.add_subparsers(dest="users_command", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="create a user who signs in with a password")
    add.add_argument("name", help="the name they sign in with")
    passwd = actions.add_parser("passwd", help="change a user's password")
    passwd.add_argument("name", help="the user's name")
    signout = actions.add_parser(
        "signout", help="end every session of a user, on every device (sign out everywhere)"
    )
    signout.add_argument("name", help="the user's name")
    actions.add_parser("list", help="list the users")


def _password(stdin: TextIO, stderr: TextIO) -> str | None:
    if stdin.isatty():
        first = getpass.getpass("Password: ")
        if first != getpass.getpass("Repeat it: "):
            print("intent_ui: the two passwords differ; nothing was changed.", file=stderr)
            return None
        return first
    return stdin.readline().rstrip("\r\n")


def run_users_command(
    args: argparse.Namespace,
    *,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
    stderr: TextIO = sys.stderr,
) -> int:
    """Run one `users` action; returns the exit code."""
    from intent_ui.store import users
    from intent_ui.store.db import StoreError, init_db

    try:
        engine = init_db()
    except StoreError as exc:
        print(f"intent_ui: {exc}", file=stderr)
        return EXIT_FAILED
    if args.users_command == "list":
        for user in users.list_users(engine):
            kind = "password" if user.password_hash else "no password"
            print(f"{user.name}\t{kind}", file=stdout)
        return EXIT_OK
    if args.users_command == "signout":
        return _sign_out_everywhere(engine, args.name, stdout, stderr)
    password = _password(stdin, stderr)
    if password is None:
        return EXIT_USAGE
    try:
        if args.users_command == "add":
            users.add_user(engine, args.name, password)
            print(f"Added {args.name.strip()}.", file=stdout)
            return EXIT_OK
        if users.set_password(engine, args.name, password) is None:
            print(
                f"intent_ui: there is no user named {args.name!r}; add them with "
                f"`python -m intent_ui users add {args.name}`.",
                file=stderr,
            )
            return EXIT_FAILED
    except ValueError as exc:
        print(f"intent_ui: {exc}", file=stderr)
        return EXIT_USAGE
    print(f"Changed the password of {args.name.strip()}.", file=stdout)
    return EXIT_OK


def _sign_out_everywhere(engine: Engine, name: str, stdout: TextIO, stderr: TextIO) -> int:
    from intent_ui.store import users

    user = users.get_user_by_name(engine, name)
    if user is None:
        print(
            f"intent_ui: there is no user named {name!r}; "
            "`python -m intent_ui users list` shows who there is.",
            file=stderr,
        )
        return EXIT_FAILED
    if not user.password_hash:
        print(
            f"intent_ui: {user.name} has no password, so no sessions to end (the sign-in "
            "proxy of header mode signs them in).",
            file=stderr,
        )
        return EXIT_FAILED
    users.end_sign_ins(engine, user.id)
    print(f"Ended every session of {user.name}; they sign in again on every device.", file=stdout)
    return EXIT_OK
