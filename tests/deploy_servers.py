"""Real servers for the deployment tests: nginx (Debian package, with the njs module) in
the foreground with its own prefix, and Virtuoso (Debian `virtuoso-opensource`) with a
temporary database. Both on free loopback ports, stopped when the block ends."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from sparql_server import free_port

NJS_MODULE = Path("/usr/lib/nginx/modules/ngx_http_js_module.so")


def _wait(url: str, process: subprocess.Popen, log: Path, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                text = log.read_text(errors="replace") if log.exists() else ""
                raise RuntimeError(f"{what} did not start: {text[-2000:]}") from None
            time.sleep(0.05)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def nginx_server(dist: Path, prefix: str, sparql: str, workdir: Path):
    """nginx serving `dist/site` with kg's generated rules, on a host that also serves the
    site folder plainly at `prefix` (so a rule that fails to match shows); yields the base URL."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(binary).exists(), "nginx must be installed (scripts/test: apt nginx)"
    assert NJS_MODULE.exists(), "the njs module must be installed (libnginx-mod-http-js)"
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    temps = "".join(
        f"    {name}_temp_path {workdir}/{name};\n"
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;\n" if os.getuid() == 0 else ""  # workers must read the tmp tree
    conf = workdir / "nginx.conf"
    conf.write_text(
        f"""{user}daemon off;
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
load_module {NJS_MODULE};
events {{ worker_connections 64; }}
http {{
    access_log off;
{temps}    server {{
        listen 127.0.0.1:{port};
        js_import kg from {dist}/deploy/negotiate.js;
        set $kg_site {dist}/site;
        set $kg_sparql {sparql};
        include {dist}/deploy/nginx.conf;
        # the host also serves the folder plainly: kg's locations must take precedence
        location {prefix} {{
            alias {dist}/site/;
        }}
    }}
}}
""",
        encoding="utf-8",
    )
    log = workdir / "error.log"
    process = subprocess.Popen(
        [binary, "-p", str(workdir), "-c", str(conf), "-e", str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(f"{base}/", process, log, 15, "nginx")
        yield base
    finally:
        _stop(process)


VIRTUOSO_INI = """[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql}
DisableUnixSocket = 1
NumberOfBuffers = 2000
MaxDirtyBuffers = 1200
CheckpointInterval = 0
DirsAllowed = .
[HTTPServer]
ServerPort = 127.0.0.1:{http}
ServerThreads = 4
"""


@contextmanager
def virtuoso_server(workdir: Path):
    """A stock Virtuoso (new database, user dba/dba) in the foreground; yields its HTTP base
    URL and its SQL port."""
    binary = shutil.which("virtuoso-t")
    assert binary, "virtuoso-t must be installed (scripts/test: apt virtuoso-opensource)"
    workdir.mkdir(parents=True, exist_ok=True)
    http, sql = free_port(), free_port()
    ini = workdir / "virtuoso.ini"
    ini.write_text(VIRTUOSO_INI.format(d=workdir, sql=sql, http=http), encoding="utf-8")
    process = subprocess.Popen(
        [binary, "+foreground", "+configfile", str(ini)],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{http}"
    try:
        _wait(f"{base}/sparql?query=ASK%7B%7D", process, workdir / "virtuoso.log", 60, "virtuoso")
        yield base, sql
    finally:
        _stop(process)


def virtuoso_sql(port: int, statements: str) -> None:
    """Run SQL as dba with Virtuoso's isql (Debian: isql-vt; not unixODBC's isql)."""
    binary = shutil.which("isql-vt") or "/usr/bin/isql-vt"
    done = subprocess.run(
        [binary, f"127.0.0.1:{port}", "dba", "dba", f"exec={statements}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0 and "Error" not in done.stdout + done.stderr, done


APACHE_MODULES = (
    "mpm_event authz_core mime negotiation rewrite headers setenvif dir alias proxy proxy_http"
)


@contextmanager
def apache_server(site: Path, prefix: str, sparql: str, workdir: Path):
    """Apache (Debian's apache2) serving a copy of `site` at `prefix` with its .htaccess
    (AllowOverride All) and `ProxyPass {prefix}sparql`; yields http://127.0.0.1:PORT.

    Apache refuses to serve as root, so its workers run as www-data and read a copy of
    the site in a world-readable directory (pytest's tmp directories are private)."""
    import tempfile

    binary = shutil.which("apache2") or "/usr/sbin/apache2"
    assert Path(binary).exists(), "apache2 must be installed (scripts/test: apt apache2)"
    workdir.mkdir(parents=True, exist_ok=True)
    public = Path(tempfile.mkdtemp(prefix="kg-apache-"))
    public.chmod(0o755)
    docroot = public / "docroot"
    shutil.copytree(site, docroot / prefix.strip("/") if prefix != "/" else docroot)
    for folder in [public, *public.rglob("*")]:
        folder.chmod(0o755 if folder.is_dir() else 0o644)
    port = free_port()
    modules = "".join(
        f"LoadModule {m}_module /usr/lib/apache2/modules/mod_{m}.so\n"
        for m in APACHE_MODULES.split()
    )
    user = "User www-data\nGroup www-data\n" if os.getuid() == 0 else ""
    conf = workdir / "httpd.conf"
    conf.write_text(
        f"""ServerRoot {workdir}
ServerName 127.0.0.1
UseCanonicalName On
Listen 127.0.0.1:{port}
PidFile {workdir}/httpd.pid
DefaultRuntimeDir {workdir}
ErrorLog {workdir}/error.log
{user}{modules}TypesConfig /etc/mime.types
DocumentRoot {docroot}
<Directory {docroot}>
    AllowOverride All
    Require all granted
</Directory>
ProxyPass {prefix}sparql {sparql}
""",
        encoding="utf-8",
    )
    log = workdir / "error.log"
    process = subprocess.Popen(
        [binary, "-f", str(conf), "-DFOREGROUND"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(f"{base}/", process, log, 15, "apache2")
        yield base
    finally:
        _stop(process)
        shutil.rmtree(public, ignore_errors=True)
