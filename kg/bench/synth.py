"""A synthetic researcher corpus for benchmarks: a complete, valid project for any size.

Realistic shape: Zipf-distributed authorship (a few prolific authors, many occasional
ones), shared venues, careers across institutions with teams, non-ASCII names,
homonyms that `data/people.yaml` splits, and every profile section populated. The same
seed gives the same bytes.
"""

from __future__ import annotations

import bisect
import itertools
import random
import string
from pathlib import Path

import yaml

try:
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]

FAMILY = [
    "Zhao",
    "Wang",
    "Li",
    "Zhang",
    "Liu",
    "Chen",
    "Yang",
    "Huang",
    "Wu",
    "Zhou",
    "Xu",
    "Sun",
    "Ma",
    "Zhu",
    "Hu",
    "Guo",
    "He",
    "Lin",
    "Gao",
    "Luo",
    "Smith",
    "García",
    "Müller",
    "Nguyen",
    "Kim",
    "Park",
    "Singh",
    "Kumar",
    "Rossi",
    "Novák",
    "Öztürk",
    "Kowalski",
    "Ivanov",
    "Johansson",
    "Silva",
    "Tanaka",
    "Suzuki",
    "Cohen",
    "Dubois",
]
GIVEN = [
    "Wei",
    "Yihao",
    "Yuheng",
    "Hanyu",
    "Liangyu",
    "Yinmin",
    "Xin",
    "Yibo",
    "Jie",
    "Lei",
    "Ming",
    "Hao",
    "Fan",
    "Jun",
    "Qi",
    "Tian",
    "Zhi",
    "Yan",
    "Lin",
    "Peng",
    "Anna",
    "José",
    "Zoë",
    "Łukasz",
    "Björn",
    "Chloé",
    "Søren",
    "Ana",
    "Ravi",
    "Priya",
    "Mei",
    "Emma",
    "Noah",
    "Liam",
    "Olivia",
    "Sven",
    "Mateo",
    "Aiko",
    "Hiro",
    "Ines",
    "Omar",
]
HAN = "伟浩恒宇亮敏新博杰磊明昊凡军琪天志燕林鹏"
TOPICS = [
    "distributed systems",
    "machine learning systems",
    "cluster scheduling",
    "networking",
    "databases",
    "storage",
    "operating systems",
    "compilers",
    "security",
    "serverless computing",
    "LLM serving",
    "RL post-training",
    "collective communication",
    "GPU sharing",
    "fault tolerance",
    "consensus",
]
WORDS = [
    "Efficient",
    "Scalable",
    "Elastic",
    "Adaptive",
    "Disaggregated",
    "Fast",
    "Robust",
    "Serving",
    "Training",
    "Scheduling",
    "Large",
    "Language",
    "Models",
    "Clusters",
    "GPU",
    "Memory",
    "Networks",
    "Datacenters",
    "Graphs",
    "Streams",
    "Consensus",
    "Caching",
    "Compilation",
    "Inference",
    "Pipelines",
    "Storage",
    "at",
    "Scale",
    "for",
]


def _zipf_picker(rng: random.Random, n: int, s: float = 1.1):
    weights = [1 / (k**s) for k in range(1, n + 1)]
    cumulative = list(itertools.accumulate(weights))
    total = cumulative[-1]
    order = list(range(n))
    rng.shuffle(order)

    def pick() -> int:
        return order[bisect.bisect_left(cumulative, rng.random() * total)]

    return pick


def _registries(rng: random.Random, people: int) -> tuple[dict, dict]:
    orgs: dict = {
        "acm": {"name": "ACM", "kind": "other"},
        "ieee": {"name": "IEEE", "kind": "other"},
        "usenix": {"name": "USENIX", "kind": "other"},
    }
    for i in range(max(10, people // 50)):
        orgs[f"uni-{i}"] = {
            "name": f"University {i} of Synthesia",
            "kind": "university",
            "aliases": [f"U{i}S"],
            "location": f"City {i}, Synthesia",
        }
    for i in range(max(5, people // 200)):
        orgs[f"co-{i}"] = {"name": f"Company {i}", "kind": "company"}
        for t in range(3):
            orgs[f"co-{i}-team-{t}"] = {
                "name": f"Team {t} of Company {i}",
                "kind": "team",
                "parent": f"co-{i}",
            }
    venues: dict = {}
    for i in range(max(20, people // 400)):
        short = f"CONF{i}"
        venues[f"conf-{i}"] = {
            "name": f"Symposium on Synthetic Systems {i}",
            "short_name": short,
            "kind": "conference",
            "publisher": rng.choice(["acm", "ieee", "usenix"]),
            "aliases": [f"{short} '24", f"{short}'25"],
            "ranks": {"CCF": rng.choice("ABC")},
        }
    for i in range(max(5, people // 1000)):
        venues[f"journal-{i}"] = {
            "name": f"Transactions on Synthetic Systems {i}",
            "short_name": f"TSS{i}",
            "kind": "journal",
            "publisher": rng.choice(["acm", "ieee"]),
        }
    return orgs, venues


SUFFIXES = ["", "n", "yu", "feng", "xi", "ming", "hao"]
# Given name x suffix x family name gives 11,193 different names; drawing stops well
# short of them (past ~90 % each new name takes ever more draws, and at all of them
# none comes). The names of corpora up to PLAIN_NAMES people are drawn as they always
# were (the same seed gives the same bytes); the rest have a two-letter middle initial
# (7.6 million names).
PLAIN_NAMES = 10_000


def _names(rng: random.Random, people: int) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < min(people, PLAIN_NAMES):
        suffix = rng.choice(SUFFIXES)
        name = f"{rng.choice(GIVEN)}{suffix} {rng.choice(FAMILY)}"
        if name not in seen:
            seen.add(name)
            names.append(name)
    letters = string.ascii_uppercase
    while len(names) < people:
        suffix = rng.choice(SUFFIXES)
        given, middle = rng.choice(GIVEN), rng.choice(letters) + rng.choice(letters)
        name = f"{given}{suffix} {middle}. {rng.choice(FAMILY)}"
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def generate(out: Path, people: int, seed: int = 1) -> dict[str, int]:
    """Write a project with `people` profiles under `out`; return counts.

    Homonyms: for the first `people // 500` profiles, `data/people.yaml` registers a
    different person with the same full name; every mention of such a name says which
    one with `person:`.
    """
    rng = random.Random(seed)
    orgs, venues = _registries(rng, people)
    names = _names(rng, people)
    slugs = [f"person-{i:06d}" for i in range(people)]
    homonyms = {i: f"{slugs[i]}-namesake" for i in range(max(1, people // 500))}
    profiles = [_profile(rng, names[i], i, orgs) for i in range(people)]
    _advisors(rng, profiles, names, slugs, homonyms)
    papers = _papers(rng, names, slugs, homonyms, venues, profiles)
    data = out / "data"
    (data / "profiles").mkdir(parents=True, exist_ok=True)
    _dump(data / "organizations.yaml", orgs)
    _dump(data / "venues.yaml", venues)
    _dump(
        data / "people.yaml",
        {
            key: {
                "name": names[i],
                "disambiguation": "0002",
                "note": f"not the same person as {slugs[i]}",
            }
            for i, key in homonyms.items()
        },
    )
    for i, profile in enumerate(profiles):
        _dump(data / "profiles" / f"{slugs[i]}.yaml", profile)
    (out / "kg.toml").write_text(
        '[kg]\nbase_iri = "https://bench.example.org/"\ntitle = "Synthetic benchmark corpus"\n',
        encoding="utf-8",
    )
    return {
        "people": people,
        "publications": papers,
        "organizations": len(orgs),
        "venues": len(venues),
        "homonyms": len(homonyms),
    }


def _profile(rng: random.Random, name: str, i: int, orgs: dict) -> dict:
    given, family = name.split(" ", 1)
    unis = [k for k, v in orgs.items() if v["kind"] == "university"]
    teams = [k for k, v in orgs.items() if v["kind"] == "team"]
    start = rng.randint(2000, 2018)
    team = rng.choice(teams)
    profile = {
        "name": name,
        "given_name": given,
        "family_name": family,
        "native_names": [{"name": "".join(rng.choice(HAN) for _ in range(3)), "lang": "zh"}],
        "emails": [f"p{i}@example.org"],
        "homepage": f"https://people.example.org/p{i}/",
        "accounts": [{"service": "github", "username": f"user{i}"}],
        "interests": rng.sample(TOPICS, 3),
        "bio": f"{name} works on {rng.choice(TOPICS)}.",
        "education": [
            {
                "institution": rng.choice(unis),
                "degree": "B.S.",
                "level": "bachelor",
                "field": "Computer Science",
                "start": f"{start}-09",
                "end": f"{start + 4}-06",
            },
            {
                "institution": rng.choice(unis),
                "degree": "Ph.D.",
                "level": "doctoral",
                "field": "Computer Science",
                "start": f"{start + 4}-09",
                "end": "present" if rng.random() < 0.3 else f"{start + 9}-06",
            },
        ],
        "positions": [
            {
                "organization": orgs[team]["parent"],
                "unit": team,
                "role": "Research Intern",
                "type": "internship",
                "start": f"{start + 5}-06",
                "end": f"{start + 5}-09",
            }
        ],
        "awards": [
            {"name": "Best Paper Award", "awarded_by": rng.choice(unis), "date": str(start + 6)}
        ],
        "teaching": [
            {
                "course": "Operating Systems",
                "role": "TA",
                "terms": [f"Fall {start + 5}"],
                "institution": rng.choice(unis),
            }
        ],
        "skills": [{"category": "Programming Languages", "items": ["Python", "C++"]}],
        "publications": [],
    }
    return profile


def _advisors(rng, profiles, names, slugs, homonyms) -> None:
    """Doctoral advisors (and some co-advisors) from a pool of senior people."""
    senior = range(max(2, len(profiles) // 20))

    def ref(a: int) -> object:
        return {"name": names[a], "person": slugs[a]} if a in homonyms else names[a]

    for i, profile in enumerate(profiles):
        phd = profile["education"][1]
        advisor, co_advisor = rng.choice(senior), rng.choice(senior)
        if advisor != i:
            phd["advisors"] = [ref(advisor)]
        if rng.random() < 0.2 and co_advisor not in (i, advisor):
            phd["co_advisors"] = [ref(co_advisor)]


# Zipf co-authorship puts the busiest synthetic author on half the papers: 12,833 papers
# (2.6 MB of YAML) at 10k people, ~125,000 (25 MB, over kg's 5 MiB input limit) at 100k.
# A profile lists at most this many (its other papers still name it as an author); no
# corpus up to 10k people reaches it, so their bytes are unchanged.
LISTED_PAPERS = 15_000


def _papers(rng, names, slugs, homonyms, venues, profiles) -> int:
    people = len(names)
    pick = _zipf_picker(rng, people)
    count = int(people * 2.5)
    venue_keys = sorted(venues)
    for p in range(count):
        size = min(rng.randint(2, 7), people)  # (6 people cannot fill 7 distinct seats)
        authors: list[int] = []
        while len(authors) < size:
            a = pick()
            if a not in authors:
                authors.append(a)
        listed = [
            {"name": names[a], "person": slugs[a]} if a in homonyms else names[a] for a in authors
        ]
        if rng.random() < 0.05:  # a co-author who is the registered namesake
            i = rng.choice(sorted(homonyms))
            if i not in authors:
                listed.append({"name": names[i], "person": homonyms[i]})
        if rng.random() < 0.2:
            first = listed[0]
            listed[0] = ({**first} if isinstance(first, dict) else {"name": first}) | {
                "equal_contribution": True
            }
        entry = {
            "title": " ".join(rng.choice(WORDS) for _ in range(6)) + f" ({p})",
            "authors": listed,
            "venue": rng.choice(venue_keys),
            "year": rng.randint(2010, 2025),
        }
        for a in authors:
            if len(profiles[a]["publications"]) < LISTED_PAPERS:
                profiles[a]["publications"].append(entry)
    return count


def _dump(path: Path, data: object) -> None:
    text = yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)
    path.write_text(text, encoding="utf-8")
