"""kg build --executor dask: the same bytes as a local build; clear errors when it cannot run."""

from __future__ import annotations

import pickle
import shutil
import socket
import sys
from pathlib import Path

import pytest
from conftest import REPO

from kg import workers
from kg.cli import main
from kg.config import load_config
from kg.pipeline import build_graph
from kg.publish.site import SiteBuilder, SiteSettings


def tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def cluster_address():
    """A real dask cluster on this machine: two single-threaded worker processes."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address="127.0.0.1:0"
    ) as cluster:
        yield cluster.scheduler_address


def test_dask_build_is_byte_identical_to_a_local_build(tmp_path, cluster_address, capsys):
    local, dask = tmp_path / "local", tmp_path / "dask"
    common = ["--project", str(REPO), "build", "--no-cache"]  # validation runs on dask too
    assert main([*common, "--out", str(local), "--jobs", "1"]) == 0
    capsys.readouterr()
    args = ["--executor", "dask", "--scheduler", cluster_address, "--out", str(dask)]
    assert main([*common, *args]) == 0
    assert f"dask at {cluster_address}, 2 workers" in capsys.readouterr().err
    expected, actual = tree(local), tree(dask)
    assert len(expected) > 1000  # every person's files and pages, the site, the dumps
    assert sorted(actual) == sorted(expected)
    different = [path for path in expected if actual[path] != expected[path]]
    assert different == []


def own_index_template(project: Path) -> None:
    kg_template = Path(workers.__file__).parent / "publish" / "templates" / "index.html.j2"
    own = kg_template.read_text("utf-8").replace("<h1>", "<h1>Our lab: ", 1)
    (project / "templates").mkdir()
    (project / "templates" / "index.html.j2").write_text(own, "utf-8")


def test_project_templates_reach_dask_workers(project, tmp_path, cluster_address):
    own_index_template(project)
    local, dask = tmp_path / "local", tmp_path / "dask"
    assert main(["--project", str(project), "build", "--out", str(local)]) == 0
    args = ["--executor", "dask", "--scheduler", cluster_address, "--no-cache"]
    assert main(["--project", str(project), "build", "--out", str(dask), *args]) == 0
    assert "<h1>Our lab: " in (dask / "site" / "index.html").read_text("utf-8")
    assert tree(dask) == tree(local)


def test_a_pickled_site_builder_carries_the_project_templates(project):
    """A worker on another machine cannot read the project's folder: the templates go
    in the pickle, and the Jinja environment (not picklable) is made again."""
    own_index_template(project)
    config = load_config(project)
    resolution, mapped = build_graph(config)
    settings = SiteSettings(templates=project / "templates")
    data = pickle.dumps(SiteBuilder(resolution, mapped.triples, config.base_iri, settings))
    shutil.rmtree(project / "templates")
    assert "<h1>Our lab: " in pickle.loads(data).index_page()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_scheduler_is_exit_2_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(workers, "CONNECT_TIMEOUT", 1)
    out = tmp_path / "out"
    address = f"tcp://127.0.0.1:{_closed_port()}"
    args = ["--project", str(REPO), "build", "--no-cache", "--out", str(out)]
    assert main([*args, "--executor", "dask", "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert f"error: cannot reach the dask scheduler at '{address}'" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_scheduler_without_workers_is_exit_2_and_writes_nothing(tmp_path, capsys, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setattr(workers, "CONNECT_TIMEOUT", 1)
    out = tmp_path / "out"
    args = ["--project", str(REPO), "build", "--no-cache", "--out", str(out), "--executor", "dask"]
    with LocalCluster(n_workers=0, processes=True, dashboard_address="127.0.0.1:0") as empty:
        assert main([*args, "--scheduler", empty.scheduler_address]) == 2
    err = capsys.readouterr().err
    assert "has no workers" in err and "Traceback" not in err
    assert not out.exists()


def test_scheduler_without_dask_executor_is_a_usage_error(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["--project", str(REPO), "build", "--scheduler", "tcp://127.0.0.1:8786"]
    assert main([*args, "--out", str(out)]) == 2
    assert "--scheduler needs --executor dask" in capsys.readouterr().err
    assert not out.exists()


def test_without_dask_installed_the_error_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    out = tmp_path / "out"
    args = ["--project", str(REPO), "build", "--executor", "dask", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "install kg[dask]" in err and "Traceback" not in err
    assert not out.exists()


def test_results_come_in_item_order_with_a_bounded_number_in_flight():
    in_flight: list[int] = []
    most = 0

    def submit(item: int) -> int:
        nonlocal most
        in_flight.append(item)
        most = max(most, len(in_flight))
        return item

    def result(item: int) -> str:
        in_flight.remove(item)
        return f"part {item}"

    assert list(workers.in_order(submit, result, range(10), 3)) == [f"part {i}" for i in range(10)]
    assert most == 3
