"""A person's accounts, ORCID iD and homepage as links a visitor can follow.

Invariant: every account with an address (given, or derived for a known service the
same way the mapping derives its `schema:sameAs`) is a link whose accessible name says
the service and the person; the icon beside it is decorative (`aria-hidden`), drawn
here as inline SVG (no font or image is loaded from elsewhere).
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

from kg.iri import encode_path
from kg.model import ACCOUNT_SERVICES, Profile

SERVICE_LABELS = {
    "github": "GitHub",
    "gitlab": "GitLab",
    "twitter": "Twitter",
    "x": "X",
    "linkedin": "LinkedIn",
    "google-scholar": "Google Scholar",
    "dblp": "dblp",
    "semantic-scholar": "Semantic Scholar",
    "orcid": "ORCID",
    "homepage": "Homepage",
    "mastodon": "Mastodon",
    "bluesky": "Bluesky",
    "researchgate": "ResearchGate",
}
# (monogram, colour) of each service's badge; others get the first letter, in grey
BADGES = {
    "github": ("GH", "#24292f"),
    "gitlab": ("GL", "#a8361c"),
    "twitter": ("T", "#0f5f99"),
    "x": ("X", "#000000"),
    "linkedin": ("in", "#0a66c2"),
    "google-scholar": ("GS", "#1a57b8"),
    "dblp": ("db", "#004f80"),
    "semantic-scholar": ("S2", "#1f5f7a"),
    "orcid": ("iD", "#4f7a0e"),
    "homepage": ("⌂", "#4a4f57"),
}


@dataclass(frozen=True)
class AccountLink:
    service: str  # lower case, e.g. `google-scholar`
    label: str  # the service as people write it: "Google Scholar"
    username: str
    href: str | None  # None: an unknown service without an address (shown as text)
    icon: Markup


def service_label(service: str) -> str:
    key = service.lower()
    return SERVICE_LABELS.get(key) or service.replace("-", " ").replace("_", " ").title()


def icon(service: str) -> Markup:
    """A 16-unit badge with the service's monogram; decorative."""
    key = service.lower()
    letters, colour = BADGES.get(key, (service_label(service)[:1].upper() or "?", "#4a4f57"))
    size = 8 if len(letters) < 2 else 7
    return Markup(
        '<svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" '
        f'focusable="false"><rect width="16" height="16" rx="3" fill="{colour}"/>'
        f'<text x="8" y="11.5" text-anchor="middle" font-size="{size}" font-weight="700" '
        f'fill="#ffffff" font-family="sans-serif">{escape(letters)}</text></svg>'
    )


def account_links(profile: Profile) -> list[AccountLink]:
    """Homepage, ORCID iD, then every account, in the profile's order."""
    found = []
    if profile.homepage:
        home = profile.homepage
        found.append(AccountLink("homepage", "Homepage", home, home, icon("homepage")))
    if profile.orcid:
        orcid = f"https://orcid.org/{profile.orcid}"
        found.append(AccountLink("orcid", "ORCID", profile.orcid, orcid, icon("orcid")))
    for account in profile.accounts:
        key = account.service.lower()
        prefix = ACCOUNT_SERVICES.get(key)
        href = account.url or (prefix + encode_path(account.username) if prefix else None)
        found.append(AccountLink(key, service_label(key), account.username, href, icon(key)))
    return found
