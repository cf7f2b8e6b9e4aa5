"""YAML for suites and configs: safe, and a key given twice in one mapping is an error.

PyYAML's ``SafeLoader`` keeps the last of repeated keys silently (YAML 1.2 §3.2.1.1
requires keys to be unique), so ``models:`` written twice would run only the second
list. :class:`UniqueKeyLoader` refuses it, naming the file, the line of the second
key and the key — as the JSON readers do with ``unique_keys``.
"""

from __future__ import annotations

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
    """``yaml.SafeLoader`` that raises :class:`DuplicateKeyError` on a repeated mapping key."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            _check_unique_keys(self, node)
        return super().construct_mapping(node, deep=deep)


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
