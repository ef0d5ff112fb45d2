"""Seats handed to the package's bots by the platform (``POST /v1/games/{id}/bot``).

A bot plays from its seat's view only (:mod:`charleston_fsm.engine.bots`), inside the service
process that took the request: it wakes on the game's notifications, reads its view,
and sends its command through the store like any client. Its command ids are derived
from the seq it saw, so a second wake-up at the same seq is an idempotent duplicate.
A bot lives as long as its process (it is not persisted): after a restart the platform
hands the seat over again.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

from fastapi.concurrency import run_in_threadpool

from ..engine.bots import Bot
from ..engine.seats import Seat
from ..store import GameQuarantined
from .logs import game_id_var, log
from .notify import Notifier

BOT_POLL_SECONDS = 5.0


class BotRunner:
    def __init__(self, store: Any, notifier: Notifier) -> None:
        self.store = store
        self.notifier = notifier
        self.tasks: dict[tuple[str, Seat], asyncio.Task[None]] = {}

    def running(self, game_id: str, seat: Seat) -> bool:
        task = self.tasks.get((game_id, seat))
        return task is not None and not task.done()

    def start(self, game_id: str, seat: Seat, seed: int | None) -> bool:
        """Hand ``seat`` to a bot; ``False`` when one already plays it here."""
        if self.running(game_id, seat):
            return False
        rng = random.Random(seed if seed is not None else random.SystemRandom().random())
        bot = Bot(seat=seat, rng=rng)
        self.tasks[(game_id, seat)] = asyncio.get_running_loop().create_task(
            self._play(game_id, bot), name=f"bot {game_id} {seat.value}"
        )
        return True

    async def stop(self, game_id: str, seat: Seat) -> bool:
        task = self.tasks.pop((game_id, seat), None)
        if task is None or task.done():
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return True

    async def stop_all(self) -> None:
        for game_id, seat in list(self.tasks):
            await self.stop(game_id, seat)

    def _step(self, game_id: str, bot: Bot) -> tuple[bool, bool]:
        """One decision: (acted, finished-and-idle)."""
        seq = self.store.registry.last_seq(game_id)
        view = self.store.reads.view(game_id, bot.seat)
        command = bot.decide(view)
        if command is None:
            return False, bool(view["game"]["finished"])
        self.store.writes.execute(
            game_id, command, command_id=f"{bot.seat.value}:bot-{seq}-{command.type}"
        )
        log.info("bot command", extra={"role": bot.seat.value, "command": command.type})
        return True, False

    async def _play(self, game_id: str, bot: Bot) -> None:
        game_id_var.set(game_id)
        sub = self.notifier.subscribe(game_id)
        try:
            while True:
                try:
                    acted, done = await run_in_threadpool(self._step, game_id, bot)
                except asyncio.CancelledError:
                    raise
                except GameQuarantined:
                    log.warning("bot stops: game quarantined", extra={"role": bot.seat.value})
                    return
                except Exception as exc:  # a lost race or a refusal: look again
                    log.info(
                        "bot retries", extra={"role": bot.seat.value, "error": type(exc).__name__}
                    )
                    acted, done = False, False
                    await sub.wait(0.5)
                if done:
                    log.info("bot finished", extra={"role": bot.seat.value})
                    return
                if not acted:
                    await sub.wait(BOT_POLL_SECONDS)
        finally:
            self.notifier.unsubscribe(sub)
            self.tasks.pop((game_id, bot.seat), None)
