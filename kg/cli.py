"""The `kg` command: the only module that parses arguments, prints or exits.

Exit codes: 0 success, 1 the data does not conform to the shapes, 2 bad input or usage,
3 an internal error (a bug in kg: one line, the traceback only with --debug).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import traceback
from pathlib import Path
from typing import NoReturn

from kg import __version__
from kg.config import DEFAULT_BASE_IRI, load_config
from kg.display import terminal_safe
from kg.errors import BadRecordsError, InputError, KgError, UsageError
from kg.workers import tune_collector

EXIT_OK, EXIT_NONCONFORMING, EXIT_BAD_INPUT, EXIT_BUG = 0, 1, 2, 3
REPORT_BUGS = "the kg issue tracker (README.md, Reporting bugs)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kg",
        description="Publish researcher profiles (YAML) as a linked-data knowledge graph.",
        epilog="Exit codes: 0 success, 1 data does not conform to the shapes, "
        "2 bad input or usage, 3 internal error (a bug in kg; --debug shows the traceback).",
    )
    parser.add_argument("--version", action="version", version=f"kg {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error"
    )
    parser.add_argument("--project", type=Path, help="project directory (default: found from .)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    init = sub.add_parser(
        "init",
        help="start a new project (kg.toml, registries, an example profile)",
        description="Write a new project into DIR (default: the current directory): "
        "kg.toml, data/ with registries pre-filled from the list bundled with kg (major "
        "CS conferences and journals with their dblp keys, arXiv, common organizations "
        "with ROR and Wikidata identifiers) and an example profile. No network. Refuses "
        "to touch a directory that already has kg.toml or data/.",
    )
    init.add_argument("dir", nargs="?", type=Path, default=Path("."), help="project directory")
    init.add_argument(
        "--base-iri",
        default=DEFAULT_BASE_IRI,
        help=f"where the site will be published; every IRI starts with it "
        f"(default: the example {DEFAULT_BASE_IRI})",
    )
    init.add_argument("--title", default="Researcher profiles", help="the dataset's title")

    new = sub.add_parser(
        "new",
        help="write a commented skeleton for a new profile",
        description="Write data/profiles/<slug>.yaml, a commented profile skeleton for "
        "the person, the slug made from the name. Never overwrites a file.",
    )
    new.add_argument("kind", choices=["person"], help="what to create")
    new.add_argument("name", help='full name, e.g. "Mei Lin"')

    check = sub.add_parser(
        "check",
        help="load every profile and registry; report every mistake",
        description="Load data/ and report every mistake in one run (file:line:column, "
        "key, what was expected; unknown organizations and venues with the YAML that adds "
        "them), and warnings. Exit 0 when clean (warnings allowed), 2 when not.",
    )
    _problem_format_argument(check)

    resolve = sub.add_parser(
        "resolve",
        help="show which names, papers and venues were merged",
        description="Resolve entities across profiles and show the merge "
        "report: what was merged and why, and near misses to confirm.",
    )
    resolve.add_argument("--report", action="store_true", help="print the full merge report")
    _problem_format_argument(resolve)

    build = sub.add_parser(
        "build",
        help="build the graph and write every export",
        description="Load, resolve, map and export the graph into the output "
        "directory (replaced atomically).",
    )
    build.add_argument("--out", type=Path, help="output directory (default: dist/ or kg.toml out)")
    build.add_argument(
        "--allow-violations",
        action="store_true",
        help="publish even when the graph violates the shapes (says so)",
    )
    _jobs_argument(build)
    _cache_argument(build)
    _engine_argument(build)
    build.add_argument(
        "--executor",
        choices=["local", "dask"],
        default="local",
        help="where validation and rendering parts run: local (forked processes, the "
        "default) or dask (needs kg[dask]; unless --scheduler is given, a local cluster "
        "of --jobs workers, default one per CPU)",
    )
    build.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="address of a running dask scheduler, e.g. tcp://10.0.0.5:8786 "
        "(with --executor dask; its workers need kg installed)",
    )

    validate = sub.add_parser(
        "validate",
        help="check the graph against the SHACL shapes",
        description="Build the graph in memory and validate it against "
        "shapes/. Exit 0 when it conforms (warnings allowed), 1 when there "
        "are violations, 2 on bad input.",
    )
    validate.add_argument(
        "--format",
        choices=["text", "json", "github", "ttl"],
        default="text",
        help="text (grouped by file), json, github (GitHub Actions annotations), "
        "or ttl (sh:ValidationReport)",
    )
    _jobs_argument(validate)
    _cache_argument(validate)
    _engine_argument(validate)

    query = sub.add_parser(
        "query",
        help="run a stored or ad-hoc SPARQL query",
        description="Run a stored query (kg's built-in ones plus the project's queries/, "
        "which win on a name clash) or an ad-hoc one with --file (- for standard input; "
        "kg's prefixes are predeclared) on the graph built from data/, on a built "
        "graph file with --graph (fast on big projects), or on a SPARQL endpoint "
        "with --endpoint. Parameters are bound as RDF terms.",
    )
    query.add_argument("name", nargs="?", help="stored query name (file stem in queries/)")
    query.add_argument("--list", action="store_true", help="list stored queries and parameters")
    query.add_argument("--file", help="run the query in this file (- for standard input)")
    query.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="bind a parameter (repeatable); an IRI parameter also takes a slug "
        "(person=xin-jin) or an exact name (person='Xin Jin')",
    )
    query.add_argument(
        "--format",
        choices=["table", "csv", "tsv", "json", "ttl"],
        default="table",
        help="output format (json: SPARQL JSON results, or JSON-LD for CONSTRUCT)",
    )
    query.add_argument(
        "--graph",
        type=Path,
        help="query this graph file (.nt, .ttl, .jsonld, e.g. dist/graph.nt) instead of data/",
    )
    query.add_argument("--endpoint", help="SPARQL 1.1 query endpoint URL (http or https)")
    query.add_argument(
        "--allow-service",
        action="store_true",
        help="let an embedded query use SERVICE (it fetches from the network; refused by default)",
    )
    query.add_argument(
        "--timeout",
        type=_seconds,
        default=30.0,
        help="seconds for the whole request, redirects included (with --endpoint; default 30)",
    )
    _credential_arguments(query, "the endpoint", "KG_ENDPOINT_PASSWORD")

    publish = sub.add_parser(
        "publish",
        help="upload the built graph to a triple store (Graph Store Protocol)",
        description="Replace a named graph (or the default graph) in a triple store "
        "with the validated graph.nt of the last kg build, in one SPARQL 1.1 Graph "
        "Store Protocol PUT. Refuses a graph built with violations (exit 1). A "
        "build record this machine's kg build did not write (a cloned project's dist/, "
        "a --no-cache build) is not trusted: the graph is validated first.",
    )
    publish.add_argument("--store", required=True, help="Graph Store Protocol endpoint URL")
    publish.add_argument("--graph", help="named graph IRI, absolute (default: the default graph)")
    publish.add_argument(
        "--from",
        dest="source",
        type=Path,
        metavar="DIR",
        help="build output holding graph.nt (default: dist/ or kg.toml out)",
    )
    publish.add_argument(
        "--allow-violations",
        action="store_true",
        help="upload a graph that kg build --allow-violations wrote despite violations",
    )
    _credential_arguments(publish, "the store", "KG_STORE_PASSWORD")
    publish.add_argument(
        "--timeout",
        type=_seconds,
        default=60.0,
        help="seconds for the whole upload (default 60)",
    )

    site = sub.add_parser(
        "site",
        help="write the HTML profile pages only",
        description="Render the site (index, one page per person and per "
        "publication, with embedded JSON-LD) into a directory; kg build also "
        "writes it to dist/site/.",
    )
    site.add_argument("--out", type=Path, help="output directory (default: dist/site)")
    _jobs_argument(site)

    serve = sub.add_parser(
        "serve",
        help="serve the site, the data and a SPARQL endpoint over HTTP",
        description="Serve the built site (dist/site) with content negotiation (HTML, "
        "Turtle, JSON-LD, N-Triples at every IRI), a SPARQL 1.1 endpoint at /sparql on the "
        "embedded store, and the stored queries at /queries/<name>. Builds first when "
        "there is no build; with --watch, rebuilds after every edit.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=_port, default=8000, help="port (default 8000)")
    serve.add_argument(
        "--watch", action="store_true", help="rebuild and serve the new build after every edit"
    )
    serve.add_argument(
        "--timeout", type=float, default=10.0, help="seconds a SPARQL query may run (default 10)"
    )
    serve.add_argument(
        "--max-results",
        type=_jobs,
        default=10_000,
        metavar="N",
        help="rows or triples a SPARQL answer may hold (default 10000)",
    )

    embed = sub.add_parser(
        "embed",
        help="print a JSON-LD <script> block for a homepage",
        description="Print a ready-to-paste <script type=application/ld+json> "
        "block with the person's ProfilePage, Person and publications.",
    )
    embed.add_argument("person", help="profile slug (file name in data/profiles/)")
    embed.add_argument("--json", action="store_true", help="print the bare JSON-LD")

    _cv_parser(sub)

    bench = sub.add_parser(
        "bench",
        help="synthetic corpora for benchmarks",
        description="Generate a synthetic researcher corpus (a complete, "
        "valid project) for benchmarks.",
    )
    bench_sub = bench.add_subparsers(dest="bench_command", required=True, metavar="ACTION")
    generate = bench_sub.add_parser(
        "generate",
        help="write a synthetic project",
        description="Write a complete project (data/profiles, "
        "registries, kg.toml) with N people; the same seed gives "
        "the same bytes.",
    )
    generate.add_argument("--people", type=int, required=True, help="number of profiles")
    generate.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    generate.add_argument("--out", type=Path, required=True, help="directory to create")
    run = bench_sub.add_parser(
        "run",
        help="measure the pipeline on synthetic corpora",
        description="Generate corpora of the given sizes and print, per "
        "stage, seconds, peak memory and ratios against a naive baseline "
        "(rdflib serializers, pySHACL) and the floor (PyYAML C loader + "
        "writing the N-Triples bytes), each measured in the same run.",
    )
    run.add_argument("--sizes", default="100,1000", help="comma-separated people counts")
    run.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    run.add_argument("--json", type=Path, help="also write the raw results to this file")
    run.add_argument(
        "--doc",
        type=Path,
        help="update this Markdown file's generated table (e.g. docs/performance.md)",
    )
    run.add_argument(
        "--include",
        type=Path,
        action="append",
        default=[],
        metavar="JSON",
        help="also show the results of an earlier run (its --json file) for the sizes "
        "this run does not measure (repeatable)",
    )

    imp = sub.add_parser(
        "import",
        help="merge BibTeX, CSL-JSON, ORCID or dblp records into a profile",
        description="Read publications (and, from ORCID, employments and educations) "
        "from FILE and merge them into data/profiles/PERSON.yaml: match by DOI, arXiv id, "
        "then title; add what is new, fill missing fields, report conflicts without "
        "overwriting. The file is edited in place (comments and style kept) and replaced "
        "atomically. Malformed entries fail the import (exit 2, nothing written) unless "
        "--skip-bad.",
    )
    imp.add_argument(
        "source",
        choices=["bibtex", "csl", "orcid", "dblp", "hugo"],
        help="file format (hugo: a Hugo Blox publication's index.md)",
    )
    imp.add_argument(
        "file",
        type=Path,
        help="the file to import; for orcid and dblp also an ORCID iD or a dblp person id "
        "(00/0000) to fetch from pub.orcid.org or dblp.org (KG_ORCID_API, KG_DBLP_API: "
        "another base address)",
    )
    imp.add_argument("--person", required=True, help="profile slug (file name in data/profiles/)")
    imp.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    imp.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip malformed entries (reported) and import the rest",
    )

    export = sub.add_parser(
        "export",
        help="print a person's publications as BibTeX or CSL-JSON",
        description="Print the person's publications (newest first) as BibTeX or "
        "CSL-JSON; kg build also writes dist/people/PERSON.bib.",
    )
    export.add_argument(
        "format",
        choices=["bibtex", "csl", "hugo"],
        help="output format (hugo: Hugo Blox publication pages, written with --out)",
    )
    export.add_argument("person", help="profile slug (file name in data/profiles/)")
    export.add_argument(
        "--out",
        type=Path,
        help="hugo: a new folder to write <key>/index.md into (e.g. content/publication)",
    )
    bench_serve = bench_sub.add_parser(
        "serve",
        help="load-test kg serve on a synthetic corpus with wrk",
        description="Generate and build a synthetic corpus, run kg serve on it, and load "
        "it from wrk (Debian package) on 127.0.0.1: HTML pages, .ttl descriptions, and "
        "stored queries while pages load. Prints requests/s, p50/p99 latency, errors and "
        "the server's memory.",
    )
    bench_serve.add_argument("--people", type=_jobs, default=1000, help="profiles (default 1000)")
    bench_serve.add_argument(
        "--seconds", type=_jobs, default=60, help="length of the page phase (default 60)"
    )
    bench_serve.add_argument(
        "--clients", type=_jobs, default=16, help="concurrent connections (default 16)"
    )
    bench_serve.add_argument("--json", type=Path, help="also write the raw figures to this file")

    schema = sub.add_parser(
        "schema",
        help="print the JSON Schema of a profile or registry file",
        description="Print the JSON Schema of data/profiles/*.yaml, or of a "
        "registry, for editors (YAML language server).",
    )
    schema.add_argument(
        "--registry",
        choices=["organizations", "venues", "people"],
        help="print the schema of data/<REGISTRY>.yaml instead",
    )
    return parser


def help_texts() -> dict[str, str]:
    """`kg --help` and every subcommand's help, as printed at 100 columns (for docs/cli.md)."""
    import os

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = _parser()
        texts = {"kg": parser.format_help()}
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for name, child in sub.choices.items():
            texts[f"kg {name}"] = child.format_help()
        return texts
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _credential_arguments(parser: argparse.ArgumentParser, what: str, variable: str) -> None:
    parser.add_argument(
        "--user", help=f"user name for {what} (Digest or Basic, as the server asks)"
    )
    parser.add_argument(
        "--password-file",
        type=Path,
        metavar="FILE",
        help=f"read the password from the first line of FILE (else ${variable})",
    )
    parser.add_argument(
        "--password", help="the password itself (visible to other users in the process list)"
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def _password(args: argparse.Namespace, variable: str) -> str | None:
    from kg.query.graph_store import read_password

    if args.password is not None and args.password_file is not None:
        raise UsageError("give --password or --password-file, not both")
    if args.password is not None:
        return args.password
    return read_password(args.password_file, variable)


def _problem_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=["text", "json", "github"],
        default="text",
        help="text, json (on standard output), or github (GitHub Actions annotations: "
        "::error file=...,line=...::message)",
    )


def _jobs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=0,
        metavar="N",
        help="worker processes for validation and rendering "
        "(default: one per CPU for projects of 100 or more profiles, else 1)",
    )


def _engine_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=["compiled", "pyshacl"],
        default="compiled",
        help="SHACL engine: compiled (the default: shapes/ compiled into fast checks, one "
        "pass) or pyshacl (the reference implementation, in cached parts on --jobs workers)",
    )


def _cache_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="do everything again instead of reusing what .kg-cache/ keeps from earlier "
        "runs (parsed files, validation results of unchanged parts, rendered files of "
        "unchanged people and things)",
    )


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"expected a port number 1-65535, got {text!r}")
    return int(text)


def _cv_parser(sub) -> None:
    from kg.publish.cv.model import FORMATS, SECTION_KEYS

    cv = sub.add_parser(
        "cv",
        help="render a person's CV (Markdown, HTML, LaTeX, PDF, JSON Resume)",
        description="Render the CV of PERSON from their own profile only (the registries "
        "give organization and venue names): every section their document has, publications "
        "grouped the way CVs are (selected, published, accepted, submitted, preprints, "
        "reports). A project's templates/cv/cv.{md,html,tex}.j2 replace kg's. --format pdf "
        "runs xelatex or pdflatex (TeX Live) and needs --out.",
    )
    cv.add_argument("person", help="profile slug (file name in data/profiles/)")
    cv.add_argument("--format", choices=FORMATS, default="md", help="output format (default md)")
    cv.add_argument(
        "--out", type=Path, metavar="FILE", help="write to this file (default: standard output)"
    )
    cv.add_argument(
        "--from",
        dest="start",
        type=_cv_date,
        metavar="DATE",
        help="YYYY[-MM]: leave out entries that ended before (undated entries are kept)",
    )
    cv.add_argument(
        "--to",
        dest="end",
        type=_cv_date,
        metavar="DATE",
        help="YYYY[-MM]: leave out entries that started after",
    )
    cv.add_argument(
        "--sections",
        type=_cv_sections,
        default=SECTION_KEYS,
        metavar="LIST",
        help="comma-separated sections to include, in this order (default: all): "
        + ", ".join(SECTION_KEYS),
    )
    cv.add_argument("--max-publications", type=_jobs, metavar="N", help="list at most N")


def _cv_date(text: str):
    from kg.model import PartialDate

    try:
        return PartialDate.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected {exc}, got {text!r}") from None


def _cv_sections(text: str) -> tuple[str, ...]:
    from kg.publish.cv.model import SECTION_KEYS

    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in SECTION_KEYS]
    if unknown or not names:
        named = ", ".join(map(repr, unknown)) or repr(text)
        raise argparse.ArgumentTypeError(
            f"unknown section {named}; expected some of {', '.join(SECTION_KEYS)}"
        )
    return names


def _jobs(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def _pipeline():
    """The library's pipeline, imported on first use: it loads rdflib and pySHACL, which
    `kg --version`, `kg --help` and `kg init` do not need."""
    from kg import pipeline

    return pipeline


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    tune_collector()
    try:
        code = _run(args)
        if argv is None and args.command == "build":  # the command line, not a caller
            _exit_at_once(code)
        return code
    except InputError as exc:
        _print_problems(exc.problems, (), _problem_format(args))
        if isinstance(exc, BadRecordsError):
            print(exc.hint, file=sys.stderr)
        return EXIT_BAD_INPUT
    except KgError as exc:
        print(f"error: {terminal_safe(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `kg embed ... | head`: the reader has gone, nothing to say
        _silence_stdout()
        return EXIT_OK
    except OSError as exc:  # the machine refused: disk full, read-only, name too long
        print(f"error: {_os_error(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        print(
            f"internal error (a bug in kg {__version__}, not in your data): "
            f"{type(exc).__name__}: {_first_line(exc)}; please report it at {REPORT_BUGS}"
            + ("" if args.debug else " with the output of `kg --debug ...`"),
            file=sys.stderr,
        )
        return EXIT_BUG


def _exit_at_once(code: int) -> NoReturn:
    """End a `kg build` process without the interpreter's teardown, which frees the
    build's millions of objects one by one (about 10 s at 10k people). Exit handlers
    still run and the standard streams are flushed; every file was closed by then."""
    import atexit

    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


MAX_PROBLEMS = 200


def _os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else "(no message)"


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _run(args: argparse.Namespace) -> int:
    if args.command == "schema":
        from kg.ingest.schema import profile_schema, registry_schema

        schema = registry_schema(args.registry) if args.registry else profile_schema()
        print(json.dumps(schema, indent=2, ensure_ascii=False))
        return EXIT_OK
    if args.command == "bench" and args.bench_command == "run":
        return _bench_run(args)
    if args.command == "bench" and args.bench_command == "serve":
        from kg.bench import serve as bench

        figures = bench.run(args.people, args.seconds, args.clients, _progress)
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        print(bench.table(figures))
        return EXIT_OK
    if args.command == "bench":
        from kg.bench.synth import generate

        if args.people < 2:
            raise UsageError("--people must be at least 2 (a corpus of co-authors)")
        if args.out.exists() and any(args.out.iterdir()):
            raise UsageError(f"{args.out} exists and is not empty")
        counts = generate(args.out, args.people, args.seed)
        print(", ".join(f"{v} {k}" for k, v in counts.items()) + f" written to {args.out}")
        return EXIT_OK
    if args.command == "init":
        return _init(args)
    config = load_config(args.project)
    if args.command == "new":
        from kg.ingest.scaffold import new_person

        path = new_person(config.data_dir, args.name)
        for where in _same_name(config, args.name, path):
            print(f"warning: {args.name} already has an entry in {where}", file=sys.stderr)
        print(f"wrote {path}; fill it in, then run kg check")
        return EXIT_OK
    if args.command in ("build", "embed") and config.example_base:
        print(
            f"warning: base_iri is still the example {DEFAULT_BASE_IRI}: IRIs in the output "
            f"will not dereference; set base_iri in {config.root / 'kg.toml'}",
            file=sys.stderr,
        )
    if args.command == "check":
        return _check(config, args.format)
    if args.command == "resolve":
        resolution = _pipeline().resolve_project(config)
        if args.format == "json":
            print(json.dumps(_report_json(resolution), indent=2, ensure_ascii=False))
        else:
            _print_report(resolution, full=args.report)
        return EXIT_OK
    if args.command == "query":
        return _query(config, args)
    if args.command == "import":
        return _import(config, args)
    if args.command == "export" and args.format == "hugo":
        return _export_hugo(config, args)
    if args.command == "export":
        sys.stdout.write(_pipeline().export_citations(config, args.person, args.format))
        return EXIT_OK
    if args.command == "cv":
        return _cv(config, args)
    if args.command == "publish":
        from kg.query.graph_store import publish

        password = _password(args, "KG_STORE_PASSWORD")
        source = args.source or config.out_dir
        with _pipeline().publishable(config, source, args.allow_violations) as built:
            status = publish(built, args.store, args.graph, args.user, password, args.timeout)
        target = args.graph or "the default graph"
        print(f"published {built.triples} triples to {target} at {args.store} (HTTP {status})")
        return EXIT_OK
    if args.command == "site":
        from kg.publish.export import write_outputs

        out = args.out or config.out_dir / "site"
        files = write_outputs(
            out,
            _pipeline().site_parts(config, progress=_progress, jobs=args.jobs),
            inside=None if args.out else config.root,
        )
        print(f"wrote {out} ({len(files)} files)")
        return EXIT_OK
    if args.command == "serve":
        from kg.serve.server import Limits, serve

        with contextlib.suppress(KeyboardInterrupt):
            serve(
                config,
                args.host,
                args.port,
                args.watch,
                lambda message: print(message, file=sys.stderr, flush=True),
                Limits(args.timeout, args.max_results),
            )
        return EXIT_OK
    if args.command == "embed":
        from kg.publish.markup import escape_json_for_html, script_tag

        document = _pipeline().embed_markup(config, args.person)
        if args.json:
            print(escape_json_for_html(json.dumps(document, ensure_ascii=False, indent=2)))
        else:
            print(script_tag(document))
        return EXIT_OK
    if args.command == "validate":
        _, report = _pipeline().validate_project(
            config, progress=_progress, jobs=args.jobs, cache=args.cache, engine=args.engine
        )
        _print_validation(report, args.format)
        return EXIT_OK if report.conforms else EXIT_NONCONFORMING
    if args.command == "build":
        from kg.workers import Executor

        result = _pipeline().build(
            config,
            out=args.out,
            progress=_progress,
            allow_violations=args.allow_violations,
            jobs=args.jobs,
            cache=args.cache,
            executor=Executor(args.executor, args.scheduler),
            engine=args.engine,
        )
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        _print_report(result.resolution, full=False)
        _print_validation(result.report, "summary" if result.report.conforms else "text")
        if not result.published:
            print(
                "error: not published: the graph violates the shapes (fix the data above, or "
                "pass --allow-violations)",
                file=sys.stderr,
            )
            return EXIT_NONCONFORMING
        if not result.report.conforms:
            print("warning: published despite violations (--allow-violations)", file=sys.stderr)
        print(f"wrote {result.out_dir} ({result.triples} triples, {len(result.files)} files)")
        return EXIT_OK
    raise AssertionError(args.command)


def _cv(config, args: argparse.Namespace) -> int:
    from kg.publish.cv.formats import write_file
    from kg.publish.cv.model import Options

    if args.format == "pdf" and args.out is None:
        raise UsageError("--format pdf writes a binary file: give --out FILE")
    options = Options(args.start, args.end, args.sections, args.max_publications)
    document = _pipeline().render_cv(config, args.person, args.format, options)
    if args.out is None:
        assert isinstance(document, str)
        sys.stdout.write(document)
        return EXIT_OK
    write_file(args.out, document)
    print(f"wrote {args.out}", file=sys.stderr)
    return EXIT_OK


def _query(config, args: argparse.Namespace) -> int:
    from kg.query import lookup as querytools
    from kg.query.results import render
    from kg.query.stored import with_kg_prefixes

    queries = querytools.load_all_queries(config.builtin_queries_dir, config.project_queries_dir)
    if args.list:
        _list_queries(queries, config)
        return EXIT_OK
    query = with_kg_prefixes(_pick_query(args, queries))
    querytools.check_prefixes(query)
    values = _params(args.param)
    ask = _asker(config, args)
    for p in querytools.defaults_used(query, values):
        print(f"note: no --param {p.name}; using the default {p.name}={p.default}", file=sys.stderr)
    values = querytools.resolve_values(query, values, ask, config.base_iri)
    sys.stdout.write(render(ask(query, values), args.format, config.base_iri))
    return EXIT_OK


def _list_queries(queries: dict, config) -> None:
    project = config.project_queries_dir
    for q in queries.values():
        params = ", ".join(f"{p.name}={p.default}" for p in q.parameters)
        mine = " (project)" if project and q.path and q.path.parent == project else ""
        print(f"{q.name}{mine}: {q.summary}" + (f"\n    parameters: {params}" if params else ""))


def _pick_query(args: argparse.Namespace, queries: dict):
    from kg.query.stored import parse_query, read_query_file

    if args.file:
        text = sys.stdin.read() if args.file == "-" else read_query_file(Path(args.file))
        return parse_query(text, "ad-hoc")
    if args.name:
        if args.name not in queries:
            raise UsageError(f"no stored query {args.name!r}; `kg query --list` shows them")
        return queries[args.name]
    raise UsageError("name a stored query, or give --file or --list")


def _asker(config, args: argparse.Namespace):
    """A function answering a query with values: on the endpoint, the graph file or data/."""
    from kg.query.stored import run_embedded, run_remote

    if args.endpoint and args.graph:
        raise UsageError("give --endpoint or --graph, not both")
    if args.endpoint:
        password = _password(args, "KG_ENDPOINT_PASSWORD")
        return lambda q, v: run_remote(args.endpoint, q, v, args.timeout, args.user, password)
    from kg.query.store import QueryStore

    store = QueryStore.from_file(args.graph) if args.graph else _pipeline().query_store(config)
    return lambda q, v: run_embedded(store, q, v, args.allow_service)


def _check(config, fmt: str) -> int:
    report = _pipeline().check_project(config)
    _print_problems(report.errors, report.warnings, fmt)
    if report.errors:
        return EXIT_BAD_INPUT
    data = report.dataset
    summary = (
        f"{len(data.profiles)} profiles, {len(data.organizations)} organizations, "
        f"{len(data.venues)} venues, {len(data.people)} people"
    )
    print(f"ok: {summary}", file=sys.stderr if fmt == "json" else sys.stdout)
    return EXIT_OK


def _problem_format(args: argparse.Namespace) -> str:
    """The format problems are printed in: json/github where the command offers them."""
    fmt = getattr(args, "format", "text")
    return fmt if args.command in ("check", "resolve", "validate") and fmt != "ttl" else "text"


def _print_problems(errors, warnings, fmt: str) -> None:
    """Errors and warnings as text (standard error), JSON or GitHub annotations (stdout)."""
    if fmt == "json":
        rows = {"errors": [_problem_json(p) for p in errors]}
        rows["warnings"] = [_problem_json(p) for p in warnings]
        print(json.dumps({"ok": not errors, **rows}, indent=2, ensure_ascii=False))
        return
    if fmt == "github":
        for level, problems in (("error", errors), ("warning", warnings)):
            for p in problems:
                message = f"{p.path}: {p.message}" if p.path else p.message
                print(_annotation(level, p.source, message + (f"\n{p.fix}" if p.fix else "")))
        return
    shown = 0
    for level, problems in (("warning", warnings), ("error", errors)):
        for p in problems:
            shown += 1
            if shown > MAX_PROBLEMS:
                continue
            print(f"{level}: {terminal_safe(str(p))}", file=sys.stderr)
            for line in p.fix.splitlines():
                print(f"    {terminal_safe(line)}", file=sys.stderr)
    if shown > MAX_PROBLEMS:
        print(f"error: ... and {shown - MAX_PROBLEMS} more", file=sys.stderr)
    if errors:
        print(f"{len(errors)} problem(s) found", file=sys.stderr)


def _problem_json(p) -> dict:
    where = p.source
    return {
        "file": where.file,
        "line": where.line or None,
        "column": where.column or None,
        "path": p.path or None,
        "message": p.message,
        "fix": p.fix or None,
    }


def _annotation(level: str, source, message: str) -> str:
    """A GitHub Actions workflow command, escaped as the runner expects."""

    def prop(text: str) -> str:
        return _escape(text).replace(":", "%3A").replace(",", "%2C")

    where = [f"file={prop(source.file)}"] if source else []
    if source and source.line:
        where.append(f"line={source.line}")
        where.append(f"col={source.column}") if source.column else None
    head = f"::{level} {','.join(where)}" if where else f"::{level}"
    return f"{head}::{_escape(message)}"


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _report_json(resolution) -> dict:
    return {
        "people": len(resolution.persons),
        "publications": len(resolution.publications),
        "organizations": len(resolution.organizations),
        "venues": len(resolution.venues),
        "notes": [
            {"kind": n.kind, "subject": n.subject, "detail": n.detail} for n in resolution.notes
        ],
    }


def _same_name(config, name: str, written: Path) -> list[str]:
    """Other profiles and registered people with this name (a warning, never an error)."""
    from kg.ingest.load import load_dataset_partially
    from kg.ingest.scaffold import same_name

    data, _ = load_dataset_partially(config.data_dir)
    return [w for w in same_name(data, name) if not written.as_posix().endswith(w)]


def _init(args: argparse.Namespace) -> int:
    from kg.ingest.scaffold import init_project

    files = init_project(args.dir, args.base_iri, args.title)
    print(f"started a kg project in {args.dir} ({len(files)} files):")
    for path in files:
        print(f"  {path}")
    print('next: kg new person "Your Name", then kg check and kg build')
    return EXIT_OK


def _export_hugo(config, args: argparse.Namespace) -> int:
    from kg.publish.hugo import hugo_pages, write_pages

    if args.out is None:
        raise UsageError("kg export hugo writes a folder of pages; give it with --out DIR")
    pages = hugo_pages(_pipeline().resolve_project(config), args.person)
    written = write_pages(args.out, pages)
    print(f"wrote {len(written)} publication page(s) into {args.out}")
    return EXIT_OK


def _import(config, args: argparse.Namespace) -> int:
    from kg.imports.importer import import_file

    result = import_file(
        config, args.source, args.file, args.person, dry_run=args.dry_run, skip_bad=args.skip_bad
    )
    safe = terminal_safe  # imported text may hold terminal escapes or bidi controls
    for line in result.skipped:
        print(f"skipped: {safe(line)}", file=sys.stderr)
    for line in result.warnings:
        print(f"warning: {safe(line)}", file=sys.stderr)
    for line in result.conflicts:
        print(f"conflict: {safe(line)} (kept the profile's; edit by hand if the import is right)")
    for where, text in result.registry_entries:
        print(
            f"unknown venue or organization: add to {where.split(':')[0]} "
            f"and import again to fill it in:\n{safe(text)}"
        )
    if args.dry_run:
        sys.stdout.write(safe(result.diff))
    verb = "written" if result.written else ("would change" if result.diff else "unchanged")
    print(
        f"{result.profile}: {verb}; {result.added} added, {result.filled} filled, "
        f"{result.matched} already there, {len(result.conflicts)} conflicts"
    )
    return EXIT_OK


def _bench_run(args: argparse.Namespace) -> int:
    from kg.bench import run as bench

    try:
        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--sizes {args.sizes!r}: expected numbers like 100,1000") from None
    earlier = [result for path in args.include for result in _bench_results(path)]
    results = []
    for people in sizes:
        _progress(f"benchmarking {people} people")
        results.append(bench.measure(people, args.seed))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    results = bench.combined(earlier, results)
    text = f"{bench.table(results)}\n\nStored queries, embedded:\n\n{bench.query_table(results)}"
    when = bench.provenance(results)
    text = f"{when}\n\n{text}" if when else text
    print(f"machine: {bench.machine()}\n{text}")
    if args.doc:
        doc = args.doc.read_text(encoding="utf-8")
        head, rest = doc.split("<!-- BEGIN GENERATED -->", 1)
        _, tail = rest.split("<!-- END GENERATED -->", 1)
        body = f"Machine: {bench.machine()}.\n\n{text}"
        args.doc.write_text(
            f"{head}<!-- BEGIN GENERATED -->\n{body}\n<!-- END GENERATED -->{tail}",
            encoding="utf-8",
        )
    return EXIT_OK


def _bench_results(path: Path) -> list[dict]:
    """The results an earlier `kg bench run --json` wrote."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"--include {path}: cannot read it as JSON ({exc})") from None
    shaped = isinstance(results, list) and all(
        isinstance(r, dict) and isinstance(r.get("people"), int) and "kg" in r for r in results
    )
    if not shaped:
        raise UsageError(f"--include {path}: expected the --json file of `kg bench run`")
    return results


def _params(pairs: list[str]) -> dict[str, str]:
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--param {pair!r}: expected KEY=VALUE")
        values[key] = value
    return values


_GITHUB_LEVELS = {"Violation": "error", "Warning": "warning", "Info": "notice"}


def _print_validation(report, fmt: str) -> None:
    if fmt == "github":
        for r in report.results:
            path = f" {r.path}" if r.path else ""
            print(_annotation(_GITHUB_LEVELS.get(r.severity, "notice"), r.source, r.message + path))
        fmt = "summary"
    if fmt == "ttl":
        print(report.graph.serialize(format="turtle"))
        return
    if fmt == "json":
        rows = [
            {
                "file": r.source.file if r.source else None,
                "line": r.source.line if r.source else None,
                "column": r.source.column if r.source else None,
                "severity": r.severity,
                "message": r.message,
                "focus": r.focus,
                "path": r.path,
                "value": r.value,
                "shape": r.shape,
            }
            for r in report.results
        ]
        print(
            json.dumps({"conforms": report.conforms, "results": rows}, indent=2, ensure_ascii=False)
        )
        return
    if fmt == "text":
        current = None
        for r in report.results:
            file = r.source.file if r.source else "(no source)"
            if file != current:
                print(file)
                current = file
            line = f"{r.source.line}:{r.source.column}" if r.source else "-"
            path = f" {r.path}" if r.path else ""
            value = f" (value {r.value!r})" if r.value is not None else ""
            print(terminal_safe(f"  {line}: {r.severity}: {r.message}{path}{value}"))
    verdict = "conforms" if report.conforms else "does not conform"
    print(
        f"validation: {verdict}: {report.count('Violation')} violations, "
        f"{report.count('Warning')} warnings, {report.count('Info')} info"
    )


def _progress(message: str) -> None:
    print(f"... {message}", file=sys.stderr)


REPORT_SECTIONS = (
    ("merged", "Merges"),
    ("unconfirmed", "Unconfirmed merges (the same name alone; decide in data/people.yaml)"),
    ("near-miss", "Near misses (kept apart; confirm or split)"),
)


def _print_report(resolution, full: bool) -> None:
    kinds = {kind: [n for n in resolution.notes if n.kind == kind] for kind, _ in REPORT_SECTIONS}
    merges = len(kinds["merged"]) + len(kinds["unconfirmed"])
    print(
        f"resolved {len(resolution.persons)} people, {len(resolution.publications)} "
        f"publications, {len(resolution.organizations)} organizations, "
        f"{len(resolution.venues)} venues; {merges} merges ({len(kinds['unconfirmed'])} "
        f"unconfirmed), {len(kinds['near-miss'])} near misses"
    )
    if full:
        for kind, heading in REPORT_SECTIONS:
            print(f"\n{heading}: {len(kinds[kind])}")
            for note in kinds[kind]:
                print(terminal_safe(f"  {note.subject}: {note.detail}"))
