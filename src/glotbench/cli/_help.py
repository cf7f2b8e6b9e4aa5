"""A light renderer for the help of command groups (`glotbench --help`, `glotbench analyze --help`).

Typer renders help with :mod:`typer.rich_utils`, which imports ``rich.markdown``
(markdown-it, pygments) and ``rich.traceback`` at module level: about 0.1 s of
CPU before one line is printed, a third of the start-up budget of issue 13
(``glotbench --help`` in at most 0.3 s of CPU). A group's help holds no
Markdown and no traceback, only the usage line, the group's text, an Options
panel and a Commands panel, so :class:`FastHelpGroup` draws those panels with
rich's ``Panel`` and ``Table`` directly, in the layout and styles of Typer's
own renderer. Commands (leaves) keep Typer's renderer: their help is shown
only when asked for, and it may use every feature Typer supports.

``tests/test_cli_help.py`` holds the output to Typer's own rendering of
the same groups, byte for byte, at several widths, with and without colour;
a Typer upgrade that changes its layout fails that test rather than drifting
apart silently. With ``TYPER_USE_RICH=0`` (or ``rich_markup_mode=None``) the
plain click help is printed, as Typer would.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import typer.core
from rich.align import Align
from rich.columns import Columns
from rich.console import Console, Group
from rich.highlighter import RegexHighlighter
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

__all__ = ["FastHelpGroup"]

# Typer's help styles (typer.rich_utils); the equality test keeps them in step.
_THEME = {
    "option": "bold cyan",
    "switch": "bold green",
    "negative_option": "bold magenta",
    "negative_switch": "bold red",
    "types": "bold yellow",
    "types_sep": "dim",
    "usage": "yellow",
}
_STYLE_USAGE_COMMAND = "bold"
_STYLE_HELPTEXT = "dim"
_STYLE_TYPES = "bold yellow"
_STYLE_OPTION_DEFAULT = "dim"
_STYLE_OPTION_ENVVAR = "dim yellow"
_STYLE_REQUIRED_SHORT = "red"
_STYLE_REQUIRED_LONG = "dim red"
_STYLE_PANEL_BORDER = "dim"
_STYLE_COMMAND_NAME = "bold cyan"


class _OptionHighlighter(RegexHighlighter):
    """Switches, options, ``<types>`` and ``Usage:`` in the styles of the theme."""

    highlights = [
        r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])",
        r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
        r"(?P<types>\<[^\>]+\>)",
        r"(?P<usage>Usage: )",
    ]


class _NegativeHighlighter(RegexHighlighter):
    """The secondary (``--no-…``) forms of boolean options."""

    highlights = [
        r"(^|\W)(?P<negative_switch>\-\w+)(?![a-zA-Z0-9])",
        r"(^|\W)(?P<negative_option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
    ]


class _TypesHighlighter(RegexHighlighter):
    """Dims the brackets and bars around a type."""

    highlights = [
        r"^(?P<types_sep>(\[|<))",
        r"(?P<types_sep>\|)",
        r"(?P<types_sep>(\]|>))(\.\.\.)?$",
    ]


_highlight = _OptionHighlighter()
_highlight_negative = _NegativeHighlighter()
_highlight_types = _TypesHighlighter()


def _console() -> Console:
    """A console set up as Typer's help console (width, colour, terminal from the environment)."""
    width = os.getenv("TERMINAL_WIDTH")
    force = (
        True
        if os.getenv("GITHUB_ACTIONS") or os.getenv("FORCE_COLOR") or os.getenv("PY_COLORS")
        else None
    )
    if os.getenv("_TYPER_FORCE_DISABLE_TERMINAL"):
        force = False
    return Console(
        theme=Theme(_THEME),
        highlighter=_highlight,
        color_system="auto",
        force_terminal=force,
        width=int(width) if width else None,
    )


def _markup(text: str, style: str = "") -> Text:
    """Rich markup with the option highlighter applied (Typer's ``rich`` markup mode)."""
    return _highlight(Text.from_markup(inspect.cleandoc(text), style=style))


def _group_text(command: Any) -> Group:
    """The group's own help: first paragraph on one line, the rest dimmed below it."""
    text = inspect.cleandoc(command.help or "").partition("\f")[0]
    first, *rest = text.split("\n\n")
    if not first.startswith("\b"):
        first = first.replace("\n", " ")
    parts: list[Text] = [_markup(first.strip())]
    if rest:
        parts += [Text(""), _markup("\n\n".join(rest), style=_STYLE_HELPTEXT)]
    return Group(*parts)


def _option_help(param: Any, ctx: Any) -> Columns:
    """Help text, env var, default and required marker of one option, as Typer lays them out."""
    items: list[Text] = []
    if param.help:
        paragraphs = [
            p.replace("\n", " ").strip() if not p.startswith("\b") else p.strip("\b\n") + "\n"
            for p in param.help.split("\n\n")
        ]
        items.append(_markup("\n".join(paragraphs).strip()))
    envvar = getattr(param, "envvar", None)
    if envvar and getattr(param, "show_envvar", False):
        names = envvar if isinstance(envvar, str) else ", ".join(map(str, envvar))
        items.append(Text(f"[env var: {names}]", style=_STYLE_OPTION_ENVVAR))
    if isinstance(param, typer.core.TyperOption | typer.core.TyperArgument):
        default = param._extract_default_help_str(ctx=ctx)
        as_text = isinstance(param.show_default, str)
        if as_text or (default is not None and (param.show_default or ctx.show_default)):
            shown = param._get_default_string(
                ctx=ctx, show_default_is_str=as_text, default_value=default
            )
            if shown:
                items.append(Text(f"[default: {shown}]", style=_STYLE_OPTION_DEFAULT))
    if param.required:
        items.append(Text("[required]", style=_STYLE_REQUIRED_LONG))
    return Columns(items)


def _options_panel(command: Any, ctx: Any) -> Panel | None:
    """The Options panel: long and short forms, negative forms, type, help."""
    rows: list[list[Any]] = []
    required: list[Any] = []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False) or not isinstance(param, typer.core.TyperOption):
            continue
        longs = [o for o in param.opts if "--" in o]
        shorts = [o for o in param.opts if "--" not in o]
        negative_longs = [o for o in param.secondary_opts if "--" in o]
        negative_shorts = [o for o in param.secondary_opts if "--" not in o]
        kind = Text(style=_STYLE_TYPES, overflow="fold")
        shown_type = param.display_type_rich(ctx=ctx)
        if shown_type is not None:
            kind.append(shown_type)
        bounds = param._get_number_range_help_str()
        if bounds:
            kind.append(f" [{bounds}]")
        required.append(Text("*", style=_STYLE_REQUIRED_SHORT) if param.required else "")
        rows.append(
            [
                _highlight(",".join(longs)),
                _highlight(",".join(shorts)),
                _highlight_negative(",".join(negative_longs)),
                _highlight_negative(",".join(negative_shorts)),
                _highlight_types(kind),
                _option_help(param, ctx),
            ]
        )
    if not rows:
        return None
    table = Table(
        highlight=True, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1)
    )
    for marker, row in zip(required, rows, strict=True):
        table.add_row(*([marker, *row] if any(required) else row))
    return Panel(table, border_style=_STYLE_PANEL_BORDER, title="Options", title_align="left")


def _commands_panel(command: Any, ctx: Any) -> Panel | None:
    """The Commands panel: each visible subcommand with the first paragraph of its help."""
    shown = [command.get_command(ctx, name) for name in command.list_commands(ctx)]
    shown = [c for c in shown if c is not None and not c.hidden]
    if not shown:
        return None
    table = Table(
        highlight=False, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1)
    )
    table.add_column(
        style=_STYLE_COMMAND_NAME, no_wrap=True, width=max(len(c.name or "") for c in shown)
    )
    table.add_column("Description", justify="left", no_wrap=False, ratio=10)
    for sub in shown:
        first = inspect.cleandoc(sub.short_help or sub.help or "").split("\n\n")[0]
        if first.startswith("\b"):
            first = first.replace("\b\n", "")
        table.add_row(Text(sub.name or ""), _markup(first.strip()))
    return Panel(table, border_style=_STYLE_PANEL_BORDER, title="Commands", title_align="left")


class FastHelpGroup(typer.core.TyperGroup):
    """A Typer group whose ``--help`` is drawn without importing :mod:`typer.rich_utils`.

    Used for every group of the ``glotbench`` command (``typer.Typer(cls=...)``);
    the layout is Typer's (see the module docstring). Panels other than
    "Options" and "Commands" (``rich_help_panel``) and deprecated commands are
    handed to Typer's renderer, which knows them.
    """

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if not typer.core.HAS_RICH or self.rich_markup_mode != "rich" or self._needs_typer(ctx):
            return super().format_help(ctx, formatter)
        console = _console()
        console.print(Padding(_highlight(self.get_usage(ctx)), 1), style=_STYLE_USAGE_COMMAND)
        if self.help:
            console.print(Padding(Align(_group_text(self), pad=False), (0, 1, 1, 1)))
        for panel in (_options_panel(self, ctx), _commands_panel(self, ctx)):
            if panel is not None:
                console.print(panel)
        return None

    def _needs_typer(self, ctx: Any) -> bool:
        """True when the help uses something only Typer's renderer draws."""
        params = [p for p in self.get_params(ctx) if not getattr(p, "hidden", False)]
        subcommands = [self.get_command(ctx, n) for n in self.list_commands(ctx)]
        return (
            bool(self.deprecated)
            or any(getattr(p, "rich_help_panel", None) for p in params)
            or any(not isinstance(p, typer.core.TyperOption) for p in params)
            or any(
                c is not None and (c.deprecated or getattr(c, "rich_help_panel", None))
                for c in subcommands
            )
        )
