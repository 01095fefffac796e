"""The `kg` command: the only module that parses arguments, prints or exits.

Exit codes: 0 success, 1 the data does not conform to the shapes, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kg import __version__, pipeline
from kg.config import load_config
from kg.errors import InputError, KgError, UsageError

EXIT_OK, EXIT_NONCONFORMING, EXIT_BAD_INPUT = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kg",
        description="Publish researcher profiles (YAML) as a linked-data knowledge graph.",
        epilog="Exit codes: 0 success, 1 data does not conform to the shapes, "
        "2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"kg {__version__}")
    parser.add_argument("--project", type=Path, help="project directory (default: found from .)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser(
        "check",
        help="load every profile and registry; report every mistake",
        description="Load data/ and report every mistake (file:line:column, key, "
        "what was expected). Exit 0 when clean, 2 when not.",
    )

    resolve = sub.add_parser(
        "resolve",
        help="show which names, papers and venues were merged",
        description="Resolve entities across profiles and show the merge "
        "report: what was merged and why, and near misses to confirm.",
    )
    resolve.add_argument("--report", action="store_true", help="print the full merge report")

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

    validate = sub.add_parser(
        "validate",
        help="check the graph against the SHACL shapes",
        description="Build the graph in memory and validate it against "
        "shapes/. Exit 0 when it conforms (warnings allowed), 1 when there "
        "are violations, 2 on bad input.",
    )
    validate.add_argument(
        "--format",
        choices=["text", "json", "ttl"],
        default="text",
        help="text (grouped by file), json, or ttl (sh:ValidationReport)",
    )
    _jobs_argument(validate)
    _cache_argument(validate)

    query = sub.add_parser(
        "query",
        help="run a stored or ad-hoc SPARQL query",
        description="Run a stored query from queries/ (or an ad-hoc one with "
        "--file, - for standard input) on the graph built from data/, on a built "
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
        help="bind a parameter (repeatable)",
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
    query.add_argument("--endpoint", help="SPARQL 1.1 query endpoint URL instead of data/")
    query.add_argument("--timeout", type=float, default=30.0, help="seconds (with --endpoint)")
    query.add_argument("--user", help="user name for the endpoint (HTTP basic auth)")
    query.add_argument("--password", help="password for the endpoint")

    publish = sub.add_parser(
        "publish",
        help="upload the graph to a triple store (Graph Store Protocol)",
        description="Build the graph and replace a named graph "
        "(or the default graph) in a triple store with one SPARQL 1.1 Graph "
        "Store Protocol PUT.",
    )
    publish.add_argument("--store", required=True, help="Graph Store Protocol endpoint URL")
    publish.add_argument("--graph", help="named graph IRI (default: the default graph)")
    publish.add_argument("--user", help="user name (HTTP basic auth)")
    publish.add_argument("--password", help="password")
    publish.add_argument("--timeout", type=float, default=60.0, help="seconds")

    site = sub.add_parser(
        "site",
        help="write the HTML profile pages only",
        description="Render the site (index, one page per person and per "
        "publication, with embedded JSON-LD) into a directory; kg build also "
        "writes it to dist/site/.",
    )
    site.add_argument("--out", type=Path, help="output directory (default: dist/site)")
    _jobs_argument(site)

    embed = sub.add_parser(
        "embed",
        help="print a JSON-LD <script> block for a homepage",
        description="Print a ready-to-paste <script type=application/ld+json> "
        "block with the person's ProfilePage, Person and publications.",
    )
    embed.add_argument("person", help="profile slug (file name in data/profiles/)")
    embed.add_argument("--json", action="store_true", help="print the bare JSON-LD")

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


def _cache_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="validate every part again instead of reusing results from .kg-cache/ "
        "for parts whose triples did not change",
    )


def _jobs(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except InputError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        print(f"{len(exc.problems)} problem(s) found", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KgError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    if args.command == "schema":
        from kg.schema import profile_schema, registry_schema

        schema = registry_schema(args.registry) if args.registry else profile_schema()
        print(json.dumps(schema, indent=2, ensure_ascii=False))
        return EXIT_OK
    if args.command == "bench" and args.bench_command == "run":
        return _bench_run(args)
    if args.command == "bench":
        from kg.synth import generate

        if args.people < 1:
            raise UsageError("--people must be at least 1")
        if args.out.exists() and any(args.out.iterdir()):
            raise UsageError(f"{args.out} exists and is not empty")
        counts = generate(args.out, args.people, args.seed)
        print(", ".join(f"{v} {k}" for k, v in counts.items()) + f" written to {args.out}")
        return EXIT_OK
    config = load_config(args.project)
    if args.command == "check":
        data = pipeline.check(config)
        print(
            f"ok: {len(data.profiles)} profiles, {len(data.organizations)} organizations, "
            f"{len(data.venues)} venues, {len(data.people)} people"
        )
        return EXIT_OK
    if args.command == "resolve":
        resolution = pipeline.resolve_project(config)
        _print_report(resolution, full=args.report)
        return EXIT_OK
    if args.command == "query":
        return _query(config, args)
    if args.command == "publish":
        from kg.publish import publish

        _, mapped = pipeline.build_graph(config, progress=_progress)
        status = publish(
            mapped.graph, args.store, args.graph, args.user, args.password, args.timeout
        )
        target = args.graph or "the default graph"
        print(f"published {len(mapped.graph)} triples to {target} at {args.store} (HTTP {status})")
        return EXIT_OK
    if args.command == "site":
        from kg.export import write_outputs

        out = args.out or config.out_dir / "site"
        files = write_outputs(out, pipeline.site_parts(config, progress=_progress, jobs=args.jobs))
        print(f"wrote {out} ({len(files)} files)")
        return EXIT_OK
    if args.command == "embed":
        from kg.markup import escape_json_for_html, script_tag

        document = pipeline.embed_markup(config, args.person)
        if args.json:
            print(escape_json_for_html(json.dumps(document, ensure_ascii=False, indent=2)))
        else:
            print(script_tag(document))
        return EXIT_OK
    if args.command == "validate":
        _, report = pipeline.validate_project(
            config, progress=_progress, jobs=args.jobs, cache=args.cache
        )
        _print_validation(report, args.format)
        return EXIT_OK if report.conforms else EXIT_NONCONFORMING
    if args.command == "build":
        result = pipeline.build(
            config,
            out=args.out,
            progress=_progress,
            allow_violations=args.allow_violations,
            jobs=args.jobs,
            cache=args.cache,
        )
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


def _query(config, args: argparse.Namespace) -> int:
    from kg.query import load_queries, parse_query, run_embedded, run_remote
    from kg.results import render

    if args.list:
        for q in load_queries(config.queries_dir).values():
            params = ", ".join(f"{p.name}={p.default}" for p in q.parameters)
            print(f"{q.name}: {q.summary}" + (f"\n    parameters: {params}" if params else ""))
        return EXIT_OK
    if args.file:
        text = sys.stdin.read() if args.file == "-" else _read_text(args.file)
        query = parse_query(text, "ad-hoc")
    elif args.name:
        queries = load_queries(config.queries_dir)
        if args.name not in queries:
            raise UsageError(f"no stored query {args.name!r}; `kg query --list` shows them")
        query = queries[args.name]
    else:
        raise UsageError("name a stored query, or give --file or --list")
    values = _params(args.param)
    if args.endpoint and args.graph:
        raise UsageError("give --endpoint or --graph, not both")
    if args.endpoint:
        answer = run_remote(args.endpoint, query, values, args.timeout, args.user, args.password)
    elif args.graph:
        from kg.store import QueryStore

        answer = run_embedded(QueryStore.from_file(args.graph), query, values)
    else:
        answer = run_embedded(pipeline.build_graph(config)[1].graph, query, values)
    sys.stdout.write(render(answer, args.format))
    return EXIT_OK


def _bench_run(args: argparse.Namespace) -> int:
    from kg import bench

    try:
        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--sizes {args.sizes!r}: expected numbers like 100,1000") from None
    results = []
    for people in sizes:
        _progress(f"benchmarking {people} people")
        results.append(bench.measure(people, args.seed))
    text = f"{bench.table(results)}\n\nStored queries, embedded:\n\n{bench.query_table(results)}"
    print(f"machine: {bench.machine()}\n{text}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
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


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read query file {path}: {exc}") from None


def _params(pairs: list[str]) -> dict[str, str]:
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--param {pair!r}: expected KEY=VALUE")
        values[key] = value
    return values


def _print_validation(report, fmt: str) -> None:
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
            print(f"  {line}: {r.severity}: {r.message}{path}{value}")
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
                print(f"  {note.subject}: {note.detail}")
