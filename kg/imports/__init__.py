"""Importers: BibTeX, CSL-JSON, ORCID and dblp records merged into a profile's YAML.

Readers (`bibtex`, `csl`, `orcid`, `dblp`) parse a file into source-neutral records
(`record`); `merge` plans the merge against the resolved project; `yamledit` edits the
profile text in place; `importer.import_file` runs it all and replaces the file
atomically. It sits after the pipeline's stages: it reads the resolved project and the
citation writer to match and to report.
"""
