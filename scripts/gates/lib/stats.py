"""--stats-json files, read one JSON object a line, every line checked against
docs/stats.schema.json. `kind` says which command wrote the file: "share" (`sharectl share
--whip`, `--janus`), "call" (`sharectl share --room`, `sharectl watch`) or "janusWatch" (`sharectl
watch --janus`); it names the schema's part.

A line that is not JSON raises ValueError, as json.loads does (a reader polling a file may meet a
last line still being written). A line that is JSON but does not fit the schema raises
StatsLineInvalid, which is not a ValueError, so no reader passes over it: the gate fails, naming
the file, the line and the field."""
import json
import os

from .paths import ROOT

SCHEMA = os.path.join(ROOT, "docs", "stats.schema.json")
KINDS = ("share", "call", "janusWatch")
_validators = {}
_fitting = set()  # (kind, line text) already checked


class StatsLineInvalid(Exception):
    """A --stats-json line that does not fit docs/stats.schema.json."""


def _validator(kind):
    if kind not in KINDS:
        raise RuntimeError(f"stats: no kind {kind!r} (have: {', '.join(KINDS)})")
    if kind not in _validators:
        try:
            import jsonschema
        except ImportError as error:
            raise RuntimeError("the Python module jsonschema is missing (scripts/setup.sh test installs Debian's "
                               "python3-jsonschema, and jsonschema in .venv from requirements.txt)") from error
        with open(SCHEMA) as f:
            schema = json.load(f)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        part = {key: value for key, value in schema.items() if key != "oneOf"}
        part["$ref"] = f"#/$defs/{kind}"
        _validators[kind] = cls(part)
    return _validators[kind]


def check_line(line, kind, where="stats"):
    """Raises StatsLineInvalid unless the parsed line `line` fits the schema's `kind` part."""
    import jsonschema
    errors = list(_validator(kind).iter_errors(line))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        field = "/".join(str(part) for part in error.absolute_path) or "the line"
        raise StatsLineInvalid(f"{where}: not a {kind} stats line of docs/stats.schema.json: at {field}: "
                               f"{error.message[:300]}")


def parse_line(text, kind, where="stats"):
    """One line of a stats file, parsed and checked."""
    line = json.loads(text)
    if (kind, text) not in _fitting:
        check_line(line, kind, where)
        _fitting.add((kind, text))
    return line


def read_stats(path, kind, skip_broken=False):
    """Every line of the stats file at `path` (blank lines left out), each checked. A line that is
    not JSON raises ValueError, or with `skip_broken` is passed over. OSError if unreadable."""
    lines = []
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                lines.append(parse_line(text.rstrip("\n"), kind, f"{path} line {number}"))
            except ValueError:
                if not skip_broken:
                    raise
    return lines


def last_stats(path, kind):
    """The last line of the file, checked with every line before it; {} while the file is missing,
    empty, or its last line is half written."""
    try:
        lines = read_stats(path, kind)
    except (OSError, ValueError):
        return {}
    return lines[-1] if lines else {}
