"""YAML for suites and configs: safe, and a key given twice in one mapping is an error.

PyYAML's ``SafeLoader`` keeps the last of repeated keys silently (YAML 1.2 §3.2.1.1
requires keys to be unique), so ``models:`` written twice would run only the second
list. :class:`UniqueKeyLoader` refuses it, naming the file, the line of the second
key and the key — as the JSON readers do with ``unique_keys``.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import ConstructorError

from glotbench.errors import InputError


class DuplicateKeyError(ConstructorError):
    """A mapping names the same key twice; ``key`` and ``line`` (1-based) say which and where."""

    def __init__(self, key: Any, line: int, first_line: int, mark: Any) -> None:
        super().__init__(
            None,
            None,
            f"the key {key!r} appears twice in one mapping (lines {first_line} and "
            f"{line}); keep one (YAML readers silently keep the last)",
            mark,
        )
        self.key = key
        self.line = line
        self.first_line = first_line


def _check_unique_keys(loader: yaml.SafeLoader, node: yaml.MappingNode) -> None:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # keys merged in with << may be overridden, as YAML allows
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: SafeLoader reports it
            continue
        line = key_node.start_mark.line + 1
        if first is not None:
            raise DuplicateKeyError(key, line, first, key_node.start_mark)
        seen[key] = line


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises :class:`DuplicateKeyError` on a repeated mapping key.

    It also reads YAML 1.2 floats that YAML 1.1 (PyYAML) leaves as strings:
    an exponent without a decimal point (``2e-5``, ``1E+3``) is a float, as
    YAML 1.2's core schema (§10.3.2) and JSON say, so ``learning_rate: 2e-5``
    is the number it looks like.
    """

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            _check_unique_keys(self, node)
        return super().construct_mapping(node, deep=deep)


#: YAML 1.2 core-schema numbers with an exponent and no dot (``2e-5``), as floats
_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9]+|[0-9]*\.[0-9]*)[eE][-+]?[0-9]+$")
UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+0123456789.")
)


def key_lines(text: str, path: str | None = None) -> dict[tuple[Any, ...], int]:
    """1-based line of every mapping key and sequence item of a YAML document, by location.

    The location is the tuple of keys and indices that leads to it, as
    pydantic's error ``loc`` (``("models", 0, "options", "learning_rate")``);
    it lets a schema error name the line of the key it is about.
    """
    try:
        root = yaml.compose(text, Loader=UniqueKeyLoader)  # noqa: S506  (a SafeLoader subclass)
    except yaml.YAMLError:
        return {}  # load_yaml reports the syntax error
    out: dict[tuple[Any, ...], int] = {}

    def walk(node: Any, loc: tuple[Any, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    here = (*loc, key_node.value)
                    out[here] = key_node.start_mark.line + 1
                    walk(value_node, here)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                out[(*loc, i)] = item.start_mark.line + 1
                walk(item, (*loc, i))

    if root is not None:
        walk(root, ())
    return out


def line_of(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    """The line of ``loc``, or of its longest located prefix (a missing key: its mapping)."""
    for end in range(len(loc), 0, -1):
        if tuple(loc[:end]) in lines:
            return lines[tuple(loc[:end])]
    return None


def load_yaml(text: str, path: str | None = None) -> Any:
    """Parse ``text`` (the content of ``path``) safely; InputError naming the line on error."""
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506  (a SafeLoader subclass)
    except DuplicateKeyError as exc:
        raise InputError(
            exc.problem or "repeated key", path=path, line=exc.line, field=str(exc.key)
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}", path=path, line=line
        ) from None
