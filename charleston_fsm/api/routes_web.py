"""The web pages: the front door, a seat's table, the director's desk, the round's room
and the spectators' page (no API here);
and the page a browser gets for a path that names nothing (an API client gets problem
JSON there, see :mod:`.problems`)."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from ..web import STATIC

router = APIRouter(include_in_schema=False)


def _page(name: str) -> FileResponse:
    return FileResponse(STATIC / name, media_type="text/html")


@router.get("/")
def front_door() -> FileResponse:
    return _page("index.html")


@router.get("/table/{game_id}")
def seat_page(game_id: str) -> FileResponse:
    return _page("table.html")


@router.get("/desk/{game_id}")
def director_desk(game_id: str) -> FileResponse:
    return _page("desk.html")


@router.get("/room/{round_id}")
def round_room(round_id: str) -> FileResponse:
    return _page("room.html")


@router.get("/compare/{round_id}")
def round_comparison(round_id: str) -> FileResponse:
    return _page("compare.html")


@router.get("/watch/round/{round_id}")
def round_spectators(round_id: str) -> FileResponse:
    return _page("watch.html")


@router.get("/watch/{game_id}")
def spectators(game_id: str) -> FileResponse:
    return _page("watch.html")


@router.get("/rounds/new")
def new_round() -> FileResponse:
    return _page("round_new.html")


def wants_page(request: Request) -> bool:
    """A person's browser asking for a page (not the API, not a script or a file)."""
    path = request.url.path
    return (
        request.method in ("GET", "HEAD")
        and "text/html" in request.headers.get("accept", "")
        and not path.startswith(("/v1/", "/static/"))
    )


def not_found_page() -> FileResponse:
    """The page for a path that names nothing: what went wrong and the way out."""
    return FileResponse(STATIC / "not_found.html", status_code=404, media_type="text/html")


def install(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
