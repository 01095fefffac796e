"""Deployment configuration for the static build: nginx, Apache, plain static hosts.

`deploy_files(base_iri)` returns {path relative to the output directory: text}; `kg build`
writes them with everything else. They depend only on the IRI layout (decision 0012):
a thing with IRI `{base}<path>` is published at `<path>` under the web root `dist/site/`
as `<path>.html` (its page) and `<path>.ttl|.jsonld|.nt` (its description). The
extensionless `<path>` serves HTML by default and RDF by content negotiation, as a direct
200 with `Content-Location` (the file served), `Vary: Accept` and `Link` headers to every
format; 406 when nothing fits. IRIs minted under a parent answer 303 See Other to the
parent (SECTIONS and PARENT_RULE, the one place that says which).

- `deploy/nginx.conf`: server-level rules (include it in your `server {}`), with
  `deploy/negotiate.js`, the q-value negotiation for nginx's njs module;
- `deploy/nginx-server.conf.example`: a whole server block showing the lines to set;
- `site/.htaccess`: the same rules for Apache (mod_negotiation, mod_rewrite, mod_headers);
- `site/.nojekyll`, `site/404.html`: for GitHub Pages and other hosts without
  negotiation (pages there link to the `.ttl`/`.jsonld`/`.nt` URLs).
"""

from __future__ import annotations

import html
import urllib.parse

from kg.formats import HTML, JSONLD, RDF_FORMATS
from kg.scheme import PAGE_SEGMENTS

# Things with pages, by the number of path segments after their section (decision 0011:
# `dataset`, `person/<slug>`, `course/<org>/<slug>`). An IRI below one of them
# (`person/<slug>/award/1`, `venue/<key>/2024`, `dataset/class/…`) names a part of that
# thing, described in its files, and answers 303 See Other to it.
SECTIONS = PAGE_SEGMENTS
_SEGMENT = "/[^/.[:cntrl:]\\s]+"  # no CR LF (or any control) can reach a Location header
THING_RULE = "(?:" + "|".join(f"{s}{_SEGMENT * n}" for s, n in SECTIONS.items()) + ")"
PARENT_RULE = THING_RULE  # the owner of an IRI minted below it
FORMATS = tuple((f.ext, f.media) for f in (HTML, *RDF_FORMATS))  # the first is the default
# Every file type the site holds, the same on kg serve, nginx and Apache; `True`: text,
# sent with `; charset=utf-8` (JSON and JSON-LD are UTF-8 by definition: no charset).
FILE_TYPES = (
    *((ext, media, ext != JSONLD.ext) for ext, media in FORMATS),
    ("txt", "text/plain", True),
    ("xml", "application/xml", True),
    ("js", "text/javascript", True),
    ("css", "text/css", True),
    ("csv", "text/csv", True),
    ("bib", "application/x-bibtex", True),
    ("rq", "application/sparql-query", True),
    ("json", "application/json", False),
    ("svg", "image/svg+xml", False),
    ("png", "image/png", False),
    ("ico", "image/x-icon", False),
    # the project's static files (kg/publish/assets.py)
    ("jpg", "image/jpeg", False),
    ("jpeg", "image/jpeg", False),
    ("webp", "image/webp", False),
    ("gif", "image/gif", False),
    ("pdf", "application/pdf", False),
)


def base_path(base_iri: str) -> str:
    """The path prefix the site lives under: `/` for https://example.org/, `/lab/` for
    https://example.org/lab/ (up to the last slash, for bases ending in #)."""
    path = urllib.parse.urlsplit(base_iri).path or "/"
    return path[: path.rfind("/") + 1]


def deploy_files(base_iri: str) -> dict[str, str]:
    prefix = base_path(base_iri)
    return {
        "deploy/nginx.conf": nginx_conf(base_iri, prefix),
        "deploy/negotiate.js": NEGOTIATE_JS,
        "deploy/nginx-server.conf.example": nginx_example(base_iri, prefix),
        "site/.htaccess": htaccess(base_iri, prefix),
        "site/.nojekyll": "",
        "site/404.html": not_found_page(prefix),
    }


def link_header(stem: str, formats=FORMATS) -> str:
    """The Link header of a thing, the same from kg serve, nginx and Apache: each file
    that describes it as rel="describedby", and its JSON-LD once more as the one
    rel="alternate" (JSON-LD 1.1 discovery; pyld's loader fails on several)."""
    links = [f'<{stem}.{ext}>; rel="describedby"; type="{media}"' for ext, media in formats]
    links += [f'<{stem}.jsonld>; rel="alternate"; type="{m}"' for e, m in formats if e == "jsonld"]
    return ", ".join(links)


def _types() -> str:
    """nginx's `types {}` replaces the host's whole map in its location: list them all."""
    lines = "".join(f"        {media} {ext};\n" for ext, media, _ in FILE_TYPES)
    text = " ".join(sorted({media for _, media, is_text in FILE_TYPES if is_text}))
    return f"    types {{\n{lines}    }}\n    charset utf-8;\n    charset_types {text};\n"


def nginx_conf(base_iri: str, prefix: str) -> str:
    p = _regex_path(prefix)
    formats = "|".join(ext for ext, _ in FORMATS)
    return f"""# nginx rules for {base_iri} (written by kg build; docs/deploy.md).
# Include inside your server {{}} block, after these lines (see nginx-server.conf.example):
#   js_import kg from /path/to/dist/deploy/negotiate.js;   # needs the njs module
#   set $kg_site /path/to/dist/site;                        # the web root
#   set $kg_sparql http://127.0.0.1:7878/query;             # your SPARQL endpoint
js_set $kg_ext kg.extension;
js_set $kg_links kg.links;

# Redirects name the path only, never the client's Host header.
absolute_redirect off;

# No dotfiles (.htaccess, .nojekyll), whatever else serves this host; /.well-known/ (ACME
# HTTP-01 challenges) is left to the host's own locations.
location ~ ^{p}(?!\\.well-known/)(?:.*/)?\\. {{
    return 404;
}}

# The SPARQL endpoint, proxied.
location = {prefix}sparql {{
    proxy_pass $kg_sparql$is_args$args;
    proxy_set_header Host $proxy_host;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto $scheme;
}}

# IRIs minted under a thing with a page answer 303 See Other to that thing.
location ~ ^{p}(?<kg_parent>{PARENT_RULE})/. {{
    return 303 {prefix}$kg_parent;
}}

# A thing without extension: HTML by default, RDF by content negotiation (q-values).
location ~ ^{p}(?<kg_path>(?:[^/.][^/]*/)*[^/.]+)$ {{
    root $kg_site;
    set $kg_base {prefix};
{_types()}    add_header Vary Accept always;
    add_header Link $kg_links always;
    if ($kg_ext = "") {{
        return 406;
    }}
    add_header Content-Location $kg_base$kg_path.$kg_ext;
    error_page 404 {prefix}404.html;
    try_files /$kg_path.$kg_ext =404;
}}

# A page or description of a thing, by its extension URL: the other formats as Link.
location ~ ^{p}(?<kg_path>{THING_RULE})\\.(?<kg_format>{formats})$ {{
    root $kg_site;
    set $kg_base {prefix};
{_types()}    add_header Link $kg_links;
    error_page 404 {prefix}404.html;
    try_files /$kg_path.$kg_format =404;
}}

# The site root.{_slashless(prefix)}
location = {prefix} {{
    root $kg_site;
{_types()}    try_files /index.html =404;
}}

# Files with an extension (pages, downloads, void.ttl); no dotfiles.
location ~ ^{p}(?<kg_file>(?:[^/.][^/]*/)*[^/.][^/]*)$ {{
    root $kg_site;
{_types()}    error_page 404 {prefix}404.html;
    try_files /$kg_file =404;
}}
"""


def _slashless(prefix: str) -> str:
    if prefix == "/":
        return ""
    return f"\nlocation = {prefix[:-1]} {{\n    return 301 {prefix};\n}}"


def _regex_path(prefix: str) -> str:
    return "".join("\\" + c if c in ".+*?()[]{}|^$\\" else c for c in prefix)


def nginx_example(base_iri: str, prefix: str) -> str:
    return f"""# A whole server block for {base_iri} (written by kg build; docs/deploy.md).
# Debian: apt install nginx libnginx-mod-http-js; copy this to
# /etc/nginx/sites-enabled/kg.conf and change the paths and the endpoint.
server {{
    listen 80;
    server_name {urllib.parse.urlsplit(base_iri).hostname or "localhost"};
    js_import kg from /srv/kg/dist/deploy/negotiate.js;
    set $kg_site /srv/kg/dist/site;
    set $kg_sparql http://127.0.0.1:7878/query;
    include /srv/kg/dist/deploy/nginx.conf;
    # Other content of the host under other paths than {prefix} stays as it was.
}}
"""


NEGOTIATE_JS = r"""// Content negotiation for kg's nginx rules (njs; written by kg build), the same
// algorithm as kg serve: among the formats the thing has files for (html, ttl, jsonld,
// nt), each gets the q of the most specific Accept range that matches it (type/subtype
// over type/* over */*); the highest q wins, ties go to the earlier format; q=0 means
// "not acceptable"; ranges with a malformed media type or q-value are ignored.
import fs from "fs";

var FORMATS = [
%FORMATS%
];

// The formats of $kg_path that exist under $kg_site.
function available(r) {
    var stem = r.variables.kg_site + "/" + r.variables.kg_path + ".";
    return FORMATS.filter(function (format) {
        try {
            fs.accessSync(stem + format[0]);
            return true;
        } catch (e) {
            return false;
        }
    });
}

function qvalue(text) {
    var t = text.trim();
    return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) ? Number(t) : -1;
}

function ranges(accept) {
    var found = [];
    accept.split(",").forEach(function (item) {
        var params = item.split(";");
        var media = params[0].trim().split("/");
        if (media.length !== 2) {
            return;
        }
        var kind = media[0].trim().toLowerCase();
        var sub = media[1].trim().toLowerCase();
        var q = 1;
        for (var i = 1; i < params.length; i++) {
            var eq = params[i].indexOf("=");
            var name = eq < 0 ? params[i] : params[i].slice(0, eq);
            if (name.trim().toLowerCase() === "q") {
                q = eq < 0 ? -1 : qvalue(params[i].slice(eq + 1));
            }
        }
        if (q >= 0 && q <= 1 && kind && sub) {
            found.push([kind, sub, q]);
        }
    });
    return found;
}

function quality(found, media) {
    var parts = media.split("/");
    var best = -1;
    var q = 0;
    found.forEach(function (range) {
        var level = -1;
        if (range[0] === parts[0] && range[1] === parts[1]) {
            level = 2;
        } else if (range[0] === parts[0] && range[1] === "*") {
            level = 1;
        } else if (range[0] === "*" && range[1] === "*") {
            level = 0;
        }
        if (level > best) {
            best = level;
            q = range[2];
        }
    });
    return q;
}

// $kg_ext: the extension to serve; "" when no format is acceptable (406); "html" when
// the thing has no files at all (try_files then answers 404).
function extension(r) {
    var offered = available(r);
    if (offered.length === 0) {
        return "html";
    }
    var accept = r.headersIn["Accept"];
    if (!accept || !accept.trim()) {
        return offered[0][0];
    }
    var found = ranges(accept);
    var chosen = "";
    var top = 0;
    offered.forEach(function (format) {
        var q = quality(found, format[1]);
        if (q > top) {
            top = q;
            chosen = format[0];
        }
    });
    return chosen;
}

// $kg_links: the Link header naming every format the thing has files for (describedby),
// and its JSON-LD once more as the one rel="alternate" (kg.publish.deploy.link_header).
function links(r) {
    var stem = (r.variables.kg_base || "/") + r.variables.kg_path + ".";
    var found = available(r);
    var out = found.map(function (format) {
        return "<" + stem + format[0] + '>; rel="describedby"; type="' + format[1] + '"';
    });
    found.forEach(function (format) {
        if (format[0] === "jsonld") {
            out.push("<" + stem + "jsonld>; rel=\"alternate\"; type=\"" + format[1] + "\"");
        }
    });
    return out.join(", ");
}

export default { extension, links };
""".replace("%FORMATS%", "\n".join(f'    ["{ext}", "{media}"],' for ext, media in FORMATS))


def _qs(n: int) -> list[str]:
    """Apache's source qualities: 1.0 for the first (default) format, then 0.99, 0.98..."""
    return ["1.0", *(f"{1 - i / 100:.2f}" for i in range(1, n))]


def htaccess(base_iri: str, prefix: str) -> str:
    types = "".join(
        f'AddType "{media}; qs={q}" .{ext}\n'
        for (ext, media), q in zip(FORMATS, _qs(len(FORMATS)), strict=True)
    )
    types += "".join(f"AddType {media} .{ext}\n" for ext, media, _ in FILE_TYPES[len(FORMATS) :])
    charset = " ".join(f".{ext}" for ext, _, is_text in FILE_TYPES if is_text)
    link = link_header("%{KG_NAME}e").replace('"', '\\"')
    p = _regex_path(prefix)
    formats = "|".join(ext for ext, _ in FORMATS)
    return f"""# Apache rules for {base_iri} (written by kg build; docs/deploy.md).
# Needs AllowOverride All (or FileInfo Options) and mod_negotiation, mod_rewrite,
# mod_headers, mod_setenvif, mod_mime. MultiViews picks person/x.html, .ttl, .jsonld or
# .nt by Accept (q-values; qs makes HTML the default) and sends Vary and
# Content-Location itself. The server configuration needs two lines more:
#   ProxyPass {prefix}sparql http://127.0.0.1:7878/query   (mod_proxy, mod_proxy_http)
#   UseCanonicalName On   (with ServerName: redirects must not echo the Host header)
Options +MultiViews -Indexes
DirectoryIndex index.html
ErrorDocument 404 {prefix}404.html
{types}AddCharset utf-8 {charset}
# qs is for the negotiation only, not for clients.
Header edit Content-Type ";\\s*qs=[0-9.]+" ""

RewriteEngine On
# No dotfiles, except /.well-known/ (ACME HTTP-01 challenges).
RewriteRule (^|/)\\.(?!well-known/) - [R=404,L]
# Redirects name this host by its ServerName, never the client's Host header: that needs
# `UseCanonicalName On` in the server configuration (it cannot be set here).
# IRIs minted under a thing with a page answer 303 See Other to that thing, whatever
# the Accept header: MultiViews must not negotiate them (it would answer 406 first).
<If "%{{REQUEST_URI}} =~ m#^{p}{PARENT_RULE}/.#">
    Options -MultiViews
</If>
RewriteCond %{{REQUEST_URI}} ^{p}({PARENT_RULE})/.
RewriteRule ^ {prefix}%1 [R=303,L]

# Extensionless requests and the extension URLs of things: Link to every format.
SetEnvIf Request_URI "/([^/.]+)$" KG_NAME=$1
SetEnvIf Request_URI "^{p}(?={THING_RULE}\\.(?:{formats})$)(?:[^/]+/)*([^/.]+)\\." KG_NAME=$1
Header always set Link "{link}" env=KG_NAME
"""


def not_found_page(prefix: str) -> str:
    home = html.escape(prefix, quote=True)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found</title>
<style>body{{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto}}</style>
</head>
<body>
<h1>Not found</h1>
<p>Nothing is published at this address. <a href="{home}">All profiles</a></p>
</body>
</html>
"""
