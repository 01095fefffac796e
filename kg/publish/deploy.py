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

# Things with pages, by the number of path segments after their section (decision 0011:
# `dataset`, `person/<slug>`, `course/<org>/<slug>`). An IRI below one of them
# (`person/<slug>/award/1`, `venue/<key>/2024`, `dataset/class/…`) names a part of that
# thing, described in its files, and answers 303 See Other to it.
SECTIONS = {
    "dataset": 0,
    "person": 1,
    "publication": 1,
    "org": 1,
    "venue": 1,
    "topic": 1,
    "topic-set": 1,
    "profile": 1,
    "course": 2,
}
_SEGMENT = "/[^/.]+"
THING_RULE = "(?:" + "|".join(f"{s}{_SEGMENT * n}" for s, n in SECTIONS.items()) + ")"
PARENT_RULE = THING_RULE  # the owner of an IRI minted below it
FORMATS = (  # extension, media type; the first is the default
    ("html", "text/html"),
    ("ttl", "text/turtle"),
    ("jsonld", "application/ld+json"),
    ("nt", "application/n-triples"),
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


def _link_header(name: str) -> str:
    links = [f'<{name}.{ext}>; rel="alternate"; type="{media}"' for ext, media in FORMATS]
    return ", ".join(links)


# the project's static files and kg's scripts (a `types` block replaces nginx's whole map)
FILE_TYPES = (
    ("js", "text/javascript"),
    ("css", "text/css"),
    ("xml", "application/xml"),
    ("txt", "text/plain"),
    ("jpg jpeg", "image/jpeg"),
    ("png", "image/png"),
    ("webp", "image/webp"),
    ("gif", "image/gif"),
    ("svg", "image/svg+xml"),
    ("ico", "image/x-icon"),
    ("pdf", "application/pdf"),
)


def _types(extra: tuple[tuple[str, str], ...] = ()) -> str:
    lines = "".join(f"        {media} {ext};\n" for ext, media in (*FORMATS, *extra))
    return f"    types {{\n{lines}    }}\n    charset utf-8;\n    charset_types *;\n"


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

# No dotfiles (.htaccess, .nojekyll), whatever else serves this host.
location ~ ^{p}(?:.*/)?\\. {{
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
{_types(FILE_TYPES)}    error_page 404 {prefix}404.html;
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
    ["html", "text/html"],
    ["ttl", "text/turtle"],
    ["jsonld", "application/ld+json"],
    ["nt", "application/n-triples"],
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

// $kg_links: the Link header naming every format the thing has files for.
function links(r) {
    var base = r.variables.kg_base || "/";
    return available(r).map(function (format) {
        return "<" + base + r.variables.kg_path + "." + format[0] + '>; rel="alternate"; type="'
            + format[1] + '"';
    }).join(", ");
}

export default { extension, links };
"""


def htaccess(base_iri: str, prefix: str) -> str:
    types = "".join(
        f'AddType "{media}; qs={q}" .{ext}\n'
        for (ext, media), q in zip(FORMATS, ("1.0", "0.99", "0.98", "0.97"), strict=True)
    )
    link = _link_header("%{KG_NAME}e").replace('"', '\\"')
    p = _regex_path(prefix)
    formats = "|".join(ext for ext, _ in FORMATS)
    return f"""# Apache rules for {base_iri} (written by kg build; docs/deploy.md).
# Needs AllowOverride All (or FileInfo Options) and mod_negotiation, mod_rewrite,
# mod_headers, mod_setenvif, mod_mime. MultiViews picks person/x.html, .ttl, .jsonld or
# .nt by Accept (q-values; qs makes HTML the default) and sends Vary and
# Content-Location itself. /sparql needs a line in the server configuration:
#   ProxyPass {prefix}sparql http://127.0.0.1:7878/query   (mod_proxy, mod_proxy_http)
Options +MultiViews -Indexes
DirectoryIndex index.html
ErrorDocument 404 {prefix}404.html
{types}AddCharset utf-8 .html .ttl .jsonld .nt
# qs is for the negotiation only, not for clients.
Header edit Content-Type ";\\s*qs=[0-9.]+" ""

RewriteEngine On
# No dotfiles.
RewriteRule (^|/)\\. - [R=404,L]
# IRIs minted under a thing with a page answer 303 See Other to that thing (MultiViews
# has already turned person/x/award/1 into person/x.html/award/1 here).
RewriteCond %{{REQUEST_URI}} ^{p}({PARENT_RULE})(?:\\.[a-z]+)?/.
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
