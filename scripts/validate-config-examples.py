"""Validates the configuration file examples against the published JSON Schema with an
independent implementation (Python's jsonschema, Draft 7), as CI does through the test
`the_examples_match_the_published_schema`. Usage: validate-config-examples.py SCHEMA FILE..."""
import json
import sys

import jsonschema
import yaml

schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
failed = False
for path in sys.argv[2:]:
    # YAML 1.1's loader reads 09:00 as a number of minutes; quoted, the examples mean strings.
    doc = yaml.safe_load(open(path))
    for error in validator.iter_errors(doc):
        failed = True
        print(f"{path}: {'/'.join(map(str, error.path))}: {error.message}")
    # A file that breaks the schema must be refused too: a typo'd field.
    bad = json.loads(json.dumps(doc))
    bad["teams"][0]["shiftDays"] = 7
    if validator.is_valid(bad):
        failed = True
        print(f"{path}: the schema accepts an unknown field")
print("invalid" if failed else "valid")
sys.exit(1 if failed else 0)
