"""The project's own static files (`static/`): copied into the site under content-hashed
names, with thumbnails of the photos the pages show.

Invariants: a file is published at `static/<folders>/<stem>.<hash><suffix>`, the hash
being the first 10 hex digits of its content's BLAKE2b digest, so a changed file gets a
new address and an old cached copy is never shown; nothing outside the project is read
(a link that leads out of the project, or to a folder, is refused with a clear error,
never followed); hidden files (`.name`) are not published; sizes are bounded. A profile's
local `photo:` and a paper's local `pdf:` / `slides:` (written `static/...`) become the
site address of the published file, so every page, download and query shows that address.
Thumbnails are JPEG (PNG when the photo has transparency), 240 px square, without the
photo's metadata (EXIF, GPS), made with Pillow.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kg import scheme
from kg.errors import InputError, Problem, ProjectError
from kg.model import Dataset, Profile, Publication, Source

STATIC = "static"
MAX_FILES = 5000
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
MAX_PIXELS = 50_000_000  # a photo larger than this is refused (a decompression bomb)
THUMB = 240  # px: a 120 px avatar on a screen with two pixels per point
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".gif")


@dataclass(frozen=True)
class Asset:
    """One file of `static/`: where it is on disk and where the site publishes it."""

    path: Path  # the file on disk (inside the project)
    target: str  # its path in the site, e.g. `static/people/ann.3f2a9c1b0d.jpg`
    digest: str


Assets = dict[str, Asset]  # `static/people/ann.jpg` (as profiles write it) -> the asset


def scan(root: Path) -> Assets:
    """Every file under the project's `static/` folder (none when there is no folder)."""
    folder = root / STATIC
    if folder.is_symlink():
        raise ProjectError(f"{folder} is a link; static/ must be a folder of the project")
    if not folder.is_dir():
        return {}
    project = root.resolve()
    found: Assets = {}
    total = 0
    for here, dirs, files in os.walk(folder):  # links to folders are not followed
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files + [d for d in dirs if (Path(here) / d).is_symlink()]):
            if name.startswith("."):
                continue
            path = Path(here) / name
            data = _read_inside(path, project)
            total += len(data)
            if len(found) >= MAX_FILES or total > MAX_TOTAL_BYTES:
                raise ProjectError(
                    f"{folder}: more than {MAX_FILES} files or {MAX_TOTAL_BYTES >> 20} MiB; "
                    "a site's static files should be smaller"
                )
            key = path.relative_to(root).as_posix()
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            found[key] = Asset(path, _hashed(key, digest), digest)
    return found


def _read_inside(path: Path, project: Path) -> bytes:
    """The bytes of `path`, refusing a link out of the project, a folder behind a link
    and oversized files."""
    real = path.resolve()
    if not real.is_relative_to(project):
        raise ProjectError(f"{path} links out of the project (to {real}); refusing to publish it")
    if not real.is_file():  # a link to a folder, a pipe, a device
        raise ProjectError(f"{path} is not a regular file; static/ publishes files only")
    size = real.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ProjectError(f"{path} has {size >> 20} MiB; at most {MAX_FILE_BYTES >> 20} MiB")
    return real.read_bytes()


def _hashed(key: str, digest: str) -> str:
    pure = PurePosixPath(key)
    return str(pure.with_name(f"{pure.stem}.{digest[:10]}{pure.suffix}"))


# ------------------------------------------------------------------ local references


def _local(value: str | None) -> bool:
    return value is not None and value.startswith(f"{STATIC}/")


def references(data: Dataset) -> list[tuple[str, Source | None, str]]:
    """Every local file the profiles name: (path, where, field)."""
    found = []
    for profile in data.profiles:
        if _local(profile.photo):
            found.append((str(profile.photo), profile.source, "photo"))
        for i, pub in enumerate(profile.publications):
            for name in ("pdf", "slides"):
                value = getattr(pub, name)
                if _local(value):
                    found.append((value, pub.source, f"publications[{i}].{name}"))
    return found


def problems(data: Dataset, assets: Assets) -> list[Problem]:
    """A local `photo:`, `pdf:` or `slides:` that names no file of `static/`."""
    return [
        Problem(
            where or Source("data/profiles", 0, 0),
            field,
            f"{path} is not a file in the project's static/ folder "
            "(expected the path of a file under static/, like static/img/ann.jpg, "
            "or an http(s) address)",
        )
        for path, where, field in references(data)
        if path not in assets
    ]


def localize(data: Dataset, assets: Assets, base: str) -> Dataset:
    """The dataset with each local file replaced by its address in the site."""
    missing = problems(data, assets)
    if missing:
        raise InputError(missing)
    if not any(True for _ in references(data)):
        return data

    def address(value: str | None) -> str | None:
        return (
            scheme.mint(base, assets[value].target)
            if value is not None and _local(value)
            else value
        )

    def publication(pub: Publication) -> Publication:
        return dataclasses.replace(pub, pdf=address(pub.pdf), slides=address(pub.slides))

    def profile(p: Profile) -> Profile:
        pubs = [publication(pub) for pub in p.publications]
        return dataclasses.replace(p, photo=address(p.photo), publications=pubs)

    return dataclasses.replace(data, profiles=tuple(profile(p) for p in data.profiles))


# ------------------------------------------------------------------ output


def photo_thumbnails(data: Dataset, assets: Assets, base: str) -> dict[str, str]:
    """A photo's site address -> its thumbnail's path in the site (local images only)."""
    by_target = {scheme.mint(base, a.target): a for a in assets.values()}
    found = {}
    for profile in data.profiles:
        asset = by_target.get(profile.photo or "")
        if asset is not None and asset.path.suffix.lower() in IMAGE_SUFFIXES:
            found[scheme.mint(base, asset.target)] = _thumb_name(asset)
    return found


def logo_path(assets: Assets, logo: str | None) -> str | None:
    """The site path of the logo kg.toml names (`[site] logo`)."""
    if logo is None:
        return None
    if logo not in assets:
        raise ProjectError(
            f"kg.toml: [site] logo: {logo} is not a file in the project's static/ folder"
        )
    return assets[logo].target


def _thumb_name(asset: Asset) -> str:
    """PNG for formats that may hold transparency, else JPEG."""
    kind = "png" if asset.path.suffix.lower() in (".png", ".webp", ".gif") else "jpg"
    return f"{STATIC}/thumbs/{asset.digest[:16]}.{kind}"


def site_files(assets: Assets, thumbnails: dict[str, str]) -> dict[str, bytes]:
    """The published files of `static/` and the thumbnails, by path in the site."""
    files = {a.target: a.path.read_bytes() for a in assets.values()}
    by_thumb = {_thumb_name(a): a for a in assets.values()}
    for thumb in sorted(set(thumbnails.values())):
        files[thumb] = thumbnail(by_thumb[thumb].path)
    return files


def thumbnail(path: Path) -> bytes:
    """A square `THUMB` px crop of the photo's centre, without its metadata."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    png = path.suffix.lower() in (".png", ".webp", ".gif")
    try:
        with Image.open(path) as image:
            if image.width * image.height > MAX_PIXELS:
                raise ProjectError(f"{path}: {image.width}x{image.height} is too large a photo")
            upright = ImageOps.exif_transpose(image).convert("RGBA" if png else "RGB")
            small = ImageOps.fit(upright, (THUMB, THUMB), Image.Resampling.LANCZOS)
            out = io.BytesIO()
            if png:
                small.save(out, "PNG", optimize=True)
            else:
                small.save(out, "JPEG", quality=85, optimize=True)
            return out.getvalue()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ProjectError(f"{path}: not a photo kg can read ({exc})") from None
