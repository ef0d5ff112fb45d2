"""The tables of the event store (SQLAlchemy 2 declarative models).

Every table is keyed by the game first, and every unique constraint includes
``game_id``: the schema can be distributed by game (Citus), and no statement ever needs
more than the rows of one game. See ``docs/store.md``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

#: JSON on SQLite, JSONB on PostgreSQL (indexable, compact; key order is not kept,
#: which the hash chain does not rely on: it hashes canonical JSON).
JSONDoc = JSON().with_variant(JSONB(), "postgresql")
#: a JSON document whose ``None`` is SQL NULL (a game without clocks), not JSON null
ClockDoc = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")

MAX_GAME_ID = 64  # games.id
MAX_ORGANISER_NAME = 100  # organisers.name
MAX_SEQ = 2**31 - 1  # events.seq is an INTEGER: no seq, nor any "after", goes past it

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {dict[str, Any]: JSONDoc}


class GameRow(Base):
    """One game: its setup, and ``last_seq`` (the row that serialises its writers)."""

    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(MAX_GAME_ID), primary_key=True)
    ruleset: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]] = mapped_column(JSONDoc)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    players: Mapped[dict[str, Any]] = mapped_column(JSONDoc)
    last_seq: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    #: the hash of row ``last_seq``, moved with it (NULL only for games from before 0002)
    head_hash: Mapped[str | None] = mapped_column(String(64))
    #: the round the game is a table of (``rounds.id``), and its table number there
    round_id: Mapped[str | None] = mapped_column(String(MAX_GAME_ID), index=True)
    round_table: Mapped[int | None] = mapped_column(Integer)
    #: the clock document (``charleston_fsm.engine.clock_state``), NULL when clocks and bots are off
    clock: Mapped[dict[str, Any] | None] = mapped_column(ClockDoc)
    #: the earliest deadline to fire, moved with ``last_seq``; NULL when none is due
    next_due: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    #: moved by every change of the game beside its commands (a quarantine opened or
    #: lifted, a projection rebuilt, a clock reset): a writer that cached the game
    #: expects it with ``last_seq`` (docs/store.md, "One command, one statement")
    epoch: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    #: the organiser whose key created the game (``organisers.id``); NULL: the platform's
    organiser_id: Mapped[str | None] = mapped_column(String(MAX_GAME_ID), index=True)


class EventRow(Base):
    """Append-only: one row per thing the table recorded, chained by hash."""

    __tablename__ = "events"

    game_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    type: Mapped[str] = mapped_column(String(32))
    seat: Mapped[str | None] = mapped_column(String(8))
    step: Mapped[str | None] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONDoc)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    command_id: Mapped[str | None] = mapped_column(String(128))
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class CommandRow(Base):
    """One accepted command per client-chosen id: what makes a retry idempotent."""

    __tablename__ = "commands"

    game_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    command_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    command: Mapped[dict[str, Any]] = mapped_column(JSONDoc)
    first_seq: Mapped[int] = mapped_column(Integer)
    last_seq: Mapped[int] = mapped_column(Integer)


class ProjectionRow(Base):
    """The table after event ``seq``: a snapshot, so a command needs no fold."""

    __tablename__ = "projections"

    game_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer)
    snapshot: Mapped[dict[str, Any]] = mapped_column(JSONDoc)


class CredentialRow(Base):
    """Who may act as which seat (or direct): the sha256 of a bearer token per role."""

    __tablename__ = "game_credentials"

    game_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    role: Mapped[str] = mapped_column(String(16), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64))


class AnchorRow(Base):
    """A signed checkpoint of a game's chain: its head at ``seq`` (see ``ledger/anchors.py``).

    Written in the transaction of the command that reached it; updated once only, to seal
    a finished game's final anchor with its replay's digest (re-signed). The signature
    is an HMAC with a key the service holds and the database does not.
    """

    __tablename__ = "anchors"

    game_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    head_hash: Mapped[str] = mapped_column(String(64))
    finished: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    key_id: Mapped[str] = mapped_column(String(16))
    signature: Mapped[str] = mapped_column(String(64))
    #: once the finished chain was replayed: the digest of the replay's table (re-signed)
    replay_digest: Mapped[str | None] = mapped_column(String(64))


class QuarantineRow(Base):
    """A game set aside because verify failed; ``lifted_at`` set once a director lifts it.

    Rows are kept after a lift: the history of what was found and who lifted it.
    """

    __tablename__ = "quarantines"

    game_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    report: Mapped[dict[str, Any]] = mapped_column(JSONDoc)
    lifted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    lifted_by: Mapped[str | None] = mapped_column(String(128))
    lift_note: Mapped[str | None] = mapped_column(String(1000))


class RoundRow(Base):
    """Many tables created in one call; the sha256 of the round director's token."""

    __tablename__ = "rounds"

    id: Mapped[str] = mapped_column(String(MAX_GAME_ID), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    name: Mapped[str | None] = mapped_column(String(64))
    settings: Mapped[dict[str, Any]] = mapped_column(JSONDoc)
    token_hash: Mapped[str] = mapped_column(String(64))
    #: the round's spectator link (sha256 of its token; NULL: none) and the round's
    #: spectator delay (kept when the link is revoked: every link of its tables keeps it)
    spectator_hash: Mapped[str | None] = mapped_column(String(64))
    spectator_delay: Mapped[int | None] = mapped_column(Integer)
    #: the organiser whose key created the round (each of its tables has it too); NULL:
    #: the platform's
    organiser_id: Mapped[str | None] = mapped_column(String(MAX_GAME_ID), index=True)
    #: how many tables (games) the round has, fixed at creation (0010)
    tables: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    #: how many of them finished: raised by the write that finishes one, which records the
    #: round's ``round.finished`` entry when it reaches ``tables`` (``feed.RoundFinished``)
    finished_tables: Mapped[int] = mapped_column(Integer, server_default=text("0"))


class SpectatorLinkRow(Base):
    """A table's read-only link: the sha256 of its token and the delay the service
    applies (seconds). A round's link is ``rounds.spectator_hash`` and ``spectator_delay``
    (the round's delay, kept when its link is revoked): a table of a round is shown at
    least that far behind on every link, unless its link was issued ``live`` (0012)."""

    __tablename__ = "spectator_links"

    game_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    token_hash: Mapped[str] = mapped_column(String(64))
    delay: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: a featured table's live link: its round's delay does not apply to it (0012)
    live: Mapped[bool] = mapped_column(Boolean, server_default=false())


class CredentialChangeRow(Base):
    """A credential replaced or revoked (``id``: the game or the round): every service
    process polls the newest and forgets the tokens it remembered for it. A small table
    (rows older than a minute are deleted as new ones come), like ``rounds``."""

    __tablename__ = "credential_changes"

    id: Mapped[str] = mapped_column(String(MAX_GAME_ID), primary_key=True)
    changed_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), primary_key=True, index=True
    )
    what: Mapped[str] = mapped_column(String(16), primary_key=True)


class OrganiserRow(Base):
    """One organiser of a platform: its name and the sha256 of its key (``key_hash``,
    replaced by a rotation; kept once revoked, so a revoked key is told apart from an
    unknown one). A small table, kept whole on every node as ``rounds`` is."""

    __tablename__ = "organisers"

    id: Mapped[str] = mapped_column(String(MAX_GAME_ID), primary_key=True)
    name: Mapped[str] = mapped_column(String(MAX_ORGANISER_NAME))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: indexed, not unique: every unique constraint of the schema holds ``game_id``
    #: (docs/store.md); a digest of 32 random bytes is no one else's
    key_hash: Mapped[str] = mapped_column(String(64), index=True)
    key_rotated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


#: a 64-bit integer key that is SQLite's rowid there (autoincrement without a sequence)
BigKey = BigInteger().with_variant(Integer(), "sqlite")


class FeedRow(Base):
    """One entry of the feed: a lifecycle moment of a game or a round (``feed.py``).

    Written in the transaction of the rows that caused it. ``id`` is the insert order;
    ``position`` the feed's total order, given after the commit by the sequencer
    (PostgreSQL; on SQLite it stays NULL and ``id`` is the order, writes being
    serialised there). ``entry_id`` names the entry everywhere (the webhook-id).
    """

    __tablename__ = "feed"
    __table_args__ = (
        # the sequencer's work: committed entries without a position, in insert order
        Index(
            "ix_feed_unpositioned",
            "id",
            postgresql_where=text("position IS NULL"),
            sqlite_where=text("position IS NULL"),
        ),
        # one game.sealed per game (feed.record_seal: a later seal is game.record_updated)
        Index(
            "uq_feed_game_sealed",
            "game_id",
            unique=True,
            postgresql_where=text("type = 'game.sealed'"),
            sqlite_where=text("type = 'game.sealed'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigKey, primary_key=True, autoincrement=True)
    entry_id: Mapped[str] = mapped_column(String(32), unique=True)
    position: Mapped[int | None] = mapped_column(BigInteger, unique=True)
    type: Mapped[str] = mapped_column(String(32))
    game_id: Mapped[str | None] = mapped_column(String(MAX_GAME_ID))
    round_id: Mapped[str | None] = mapped_column(String(MAX_GAME_ID))
    seq: Mapped[int | None] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    data: Mapped[dict[str, Any]] = mapped_column(JSONDoc)


class WebhookEndpointRow(Base):
    """A platform's webhook endpoint: where, which entry types, how signed, its state.

    ``event_types``: ``*`` or the types between spaces (`` game.finished round.started ``),
    so one ``LIKE`` matches on both databases. ``secret``: the ``v1`` HMAC secret
    (``whsec_…``); NULL signs ``v1a`` with the service's Ed25519 key. ``organiser_id``:
    whose endpoint it is (NULL: the platform's own).
    """

    __tablename__ = "webhook_endpoints"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    url: Mapped[str] = mapped_column(String(2000))
    event_types: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str | None] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16))
    status_reason: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    organiser_id: Mapped[str | None] = mapped_column(String(MAX_GAME_ID), index=True)
    #: the secret a rotation replaced: it still signs (a second ``v1``) until
    #: ``previous_secret_until``
    previous_secret: Mapped[str | None] = mapped_column(String(128))
    previous_secret_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: nothing is sent to it before this (it did not answer, or said 429 / Retry-After)
    held_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: its first failed attempt since its last delivery (NULL: not failing)
    failing_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class WebhookOutboxRow(Base):
    """One feed entry to deliver to one endpoint, written with the entry (``webhooks.py``).

    ``queue`` keeps the order: an entry is sent only once every earlier entry of the same
    endpoint and queue (its game, or its round) is delivered or given up.
    """

    __tablename__ = "webhook_outbox"
    __table_args__ = (
        UniqueConstraint("endpoint_id", "entry_id", name="uq_webhook_outbox_endpoint_id"),
        # what is due (the claim), and what comes first in a queue (the order)
        Index(
            "ix_webhook_outbox_pending",
            "next_attempt_at",
            postgresql_where=text("status = 'pending'"),
            sqlite_where=text("status = 'pending'"),
        ),
        Index(
            "ix_webhook_outbox_queue",
            "endpoint_id",
            "queue",
            "feed_id",
            postgresql_where=text("status = 'pending'"),
            sqlite_where=text("status = 'pending'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigKey, primary_key=True, autoincrement=True)
    endpoint_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("webhook_endpoints.id", ondelete="CASCADE")
    )
    entry_id: Mapped[str] = mapped_column(String(32))
    #: the entry's ``feed.id``: a queue's order (a game's entries are inserted in its order)
    feed_id: Mapped[int] = mapped_column(BigInteger)
    queue: Mapped[str] = mapped_column(String(80))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_status: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(String(500))


class WebhookAttemptRow(Base):
    """One attempt to deliver an outbox row: the endpoint's delivery log."""

    __tablename__ = "webhook_attempts"

    id: Mapped[int] = mapped_column(BigKey, primary_key=True, autoincrement=True)
    endpoint_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), index=True
    )
    entry_id: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    status_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(String(500))
    milliseconds: Mapped[int] = mapped_column(Integer)


metadata = Base.metadata
