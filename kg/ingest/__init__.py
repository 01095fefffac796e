"""The ingest stage: YAML profiles and registries into the typed model (`load`, with safe
YAML in `yamlsafe`, names in `names`, privacy in `redact`, the JSON Schema in `schema`,
warnings in `lint`), and new projects (`scaffold`, bundled registries in `catalog`)."""
