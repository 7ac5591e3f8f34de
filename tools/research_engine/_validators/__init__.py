"""Validators compiled from schema/*.json by tools/compile_schemas.py (fastjsonschema's code generator).

`research_engine.schemas.validate` tries the compiled module first: a valid document is accepted without
importing jsonschema; anything else is handed to jsonschema, which names every problem. A module whose
SCHEMA_SHA256 does not match its schema's bytes is never used.
"""


class JsonSchemaValueException(ValueError):
    """Raised by a generated validator on the first violation (the fast path reads no details)."""

    def __init__(
        self,
        message: str,
        value: object = None,
        name: str | None = None,
        definition: object = None,
        rule: str | None = None,
    ) -> None:
        super().__init__(message)
        self.value, self.name, self.definition, self.rule = value, name, definition, rule


class JsonSchemaValuesException(ValueError):
    """Raised by generated code that collects several violations (not generated with fast_fail)."""

    def __init__(self, errors: list[JsonSchemaValueException]) -> None:
        super().__init__(f"{len(errors)} violations")
        self.errors = errors
