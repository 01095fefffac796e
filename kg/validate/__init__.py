"""The validate stage: SHACL with pySHACL and the report traced to YAML lines (`shacl`),
run in parts with a content-hash cache and worker processes (`parts`)."""
