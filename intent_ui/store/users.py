"""Users: who owns conversations, agents, memory entries and imported actions.

Without `auth:` in the config there is one user, `local` (created by the migration that
added ownership, which also gave it every row that existed before). With `auth:` users
are rows here: a reverse proxy's user header names one (`ensure_user` creates it on first
sight), or a name and password sign one in (`add_user` stores an argon2 hash, never the
password; `authenticate` checks it). A password has at least `MIN_PASSWORD_CHARS`
characters. Each user has a `session_epoch` that every sign-in cookie carries: raising it
(`end_sign_ins`, or a new password) ends every sign-in made before.

Every other store module takes the owner's id and filters by it, so a handler cannot
forget the check: another user's row is simply not found.
"""

from __future__ import annotations

import time

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Engine, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from intent_ui.core.display import DENSITY, Density
from intent_ui.core.theme import THEME, Theme
from intent_ui.store.db import add_row, open_session
from intent_ui.store.models import LOCAL_USER_ID, Clock, User

__all__ = [
    "LOCAL_USER_ID",
    "MAX_USER_NAME_CHARS",
    "MIN_PASSWORD_CHARS",
    "User",
    "UserExistsError",
    "add_user",
    "authenticate",
    "end_sign_ins",
    "ensure_user",
    "get_user",
    "get_user_by_name",
    "list_users",
    "set_density",
    "set_password",
    "set_theme",
    "user_density",
    "user_theme",
]

MAX_USER_NAME_CHARS = 200
MIN_PASSWORD_CHARS = 12
"""Shorter passwords fall to guessing too fast; twelve characters (a few words) is the
least that sign-in's slowing of repeated failures can protect."""

_hasher = PasswordHasher()
# Verifying against this keeps an unknown name as slow as a wrong password, so the
# response time does not tell which names exist.
_DUMMY_HASH = _hasher.hash("not a password anyone has")


class UserExistsError(ValueError):
    """`add_user` was given a name that is already taken."""


def _clean_name(name: str) -> str:
    cleaned = name.strip() if isinstance(name, str) else ""
    if not cleaned:
        raise ValueError("A user name cannot be blank; type at least one character.")
    if len(cleaned) > MAX_USER_NAME_CHARS:
        raise ValueError(f"A user name has at most {MAX_USER_NAME_CHARS} characters.")
    if any(ord(c) < 32 for c in cleaned):
        raise ValueError("A user name cannot contain control characters (tabs, newlines).")
    return cleaned


def _check_password(password: str) -> None:
    if not password:
        raise ValueError("A password cannot be empty.")
    if len(password) < MIN_PASSWORD_CHARS:
        raise ValueError(
            f"A password needs at least {MIN_PASSWORD_CHARS} characters; this one has "
            f"{len(password)}. A few unrelated words make one that is long and easy to remember."
        )


def get_user(engine: Engine, user_id: str) -> User | None:
    with open_session(engine) as session:
        return session.get(User, user_id)


def session_epoch(engine: Engine, user_id: str) -> int | None:
    """The user's sign-in epoch (what every sign-in of theirs carries), None when no such
    user is stored."""
    user = get_user(engine, user_id)
    return None if user is None else user.session_epoch


def get_user_by_name(engine: Engine, name: str) -> User | None:
    """The user called `name` (surrounding spaces ignored), or None."""
    return _by_name(engine, name.strip()) if isinstance(name, str) else None


def _by_name(engine: Engine, name: str) -> User | None:
    with open_session(engine) as session:
        return session.exec(select(User).where(col(User.name) == name)).first()


def list_users(engine: Engine) -> list[User]:
    """Every user, by name."""
    with open_session(engine) as session:
        return list(session.exec(select(User).order_by(col(User.name))))


def ensure_user(engine: Engine, name: str, *, now: Clock = time.time) -> User:
    """The user called `name`, created on first sight (the reverse-proxy header mode).

    Raises ValueError for a blank name or one with control characters.
    """
    cleaned = _clean_name(name)
    for _attempt in range(2):
        found = _by_name(engine, cleaned)
        if found is not None:
            return found
        try:
            with open_session(engine) as session:
                user = User(name=cleaned, created_at=now())
                session.add(user)
                session.commit()
                return user
        except IntegrityError:
            continue  # a parallel request created it first; read it back
    found = _by_name(engine, cleaned)
    assert found is not None
    return found


def add_user(engine: Engine, name: str, password: str, *, now: Clock = time.time) -> User:
    """Create a user who signs in with `password` (stored as an argon2 hash).

    Raises UserExistsError when the name is taken, ValueError for a blank name or a
    password shorter than `MIN_PASSWORD_CHARS`.
    """
    cleaned = _clean_name(name)
    _check_password(password)
    user = User(name=cleaned, password_hash=_hasher.hash(password), created_at=now())
    try:
        add_row(engine, user)
    except IntegrityError as exc:
        raise UserExistsError(
            f"A user named {cleaned!r} already exists; choose another name, or change "
            f"their password with `python -m intent_ui users passwd {cleaned}`."
        ) from exc
    return user


def set_password(engine: Engine, name: str, password: str) -> User | None:
    """Replace a user's password and end their sign-ins; None when there is no user by
    that name. Raises ValueError for a password shorter than `MIN_PASSWORD_CHARS`."""
    _check_password(password)
    with open_session(engine) as session:
        user = session.exec(select(User).where(col(User.name) == name.strip())).first()
        if user is None:
            return None
        user.password_hash = _hasher.hash(password)
        user.session_epoch += 1
        session.add(user)
        session.commit()
        return user


def end_sign_ins(engine: Engine, user_id: str) -> bool:
    """End every sign-in of the user, on every device (their cookies stop counting at
    their next event); False when there is no such user."""
    with engine.begin() as connection:
        ended = connection.execute(
            update(User)
            .where(col(User.id) == user_id)
            .values(session_epoch=col(User.session_epoch) + 1)
        )
    return bool(ended.rowcount)


def user_density(engine: Engine, user_id: str) -> Density:
    """The user's display density; the default for an unknown user or a stored value this
    version does not know."""
    return DENSITY.or_default(_stored(engine, user_id, "density"))


def set_density(engine: Engine, user_id: str, density: str) -> bool:
    """Remember the user's display density; False when there is no such user. An unknown
    density raises `ValueError` naming the accepted values."""
    return _remember(engine, user_id, density=DENSITY.parse(density))


def user_theme(engine: Engine, user_id: str) -> Theme:
    """The user's colour theme, like `user_density`."""
    return THEME.or_default(_stored(engine, user_id, "theme"))


def set_theme(engine: Engine, user_id: str, theme: str) -> bool:
    """Remember the user's colour theme, like `set_density`."""
    return _remember(engine, user_id, theme=THEME.parse(theme))


def _stored(engine: Engine, user_id: str, field: str) -> object:
    user = get_user(engine, user_id)
    return None if user is None else getattr(user, field)


def _remember(engine: Engine, user_id: str, **choices: str) -> bool:
    """Store display choices on the user's row; False when there is no such user."""
    with engine.begin() as connection:
        changed = connection.execute(update(User).where(col(User.id) == user_id).values(**choices))
    return bool(changed.rowcount)


def authenticate(engine: Engine, name: str, password: str) -> User | None:
    """The user when `password` is theirs; None for an unknown name or a wrong password."""
    user = _by_name(engine, name.strip()) if isinstance(name, str) else None
    stored = user.password_hash if user is not None else None
    try:
        _hasher.verify(stored or _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return None
    return user if stored else None
