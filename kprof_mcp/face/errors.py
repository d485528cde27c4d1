"""The error policy of every tool: expected failures answer with their reason (``ToolError``), an
unexpected one with its type and a pointer to the log, and no answer is longer than
:data:`MAX_ERROR_CHARS`; the tool annotations' four hints."""

from __future__ import annotations

import functools
import inspect
import logging
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations
from pydantic import ValidationError

from ..engine import KprofError


def _ann(
    read_only: bool, destructive: bool, idempotent: bool, open_world: bool, title: str
) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


MAX_ERROR_CHARS = 2000  # the longest error text a tool call answers with, whatever the input
_log = logging.getLogger("kprof_mcp.server")


def _internal_error(tool: str, e: Exception) -> ToolError:
    """The answer for an exception ``tool`` did not anticipate (a bug: every bad input is meant
    to raise :class:`KprofError` with a reason where it is checked), logged with its traceback.
    An ``OSError`` is named by its ``strerror`` alone: its file name may be a path the caller
    must not learn (outside the workspace, or a link's target)."""
    _log.error("internal error in tool %s", tool, exc_info=e)
    detail = (e.strerror or str(e)) if isinstance(e, OSError) else str(e)
    if len(detail) > 300:
        detail = detail[:300] + "…"
    return ToolError(
        f"internal error in {tool}: {type(e).__name__}: {detail} (a bug in kprof-mcp; the server's "
        "log has the traceback)"
    )


# Failures the SDK itself answers with their own message (a ToolError's text, a protocol error).
_ANSWERED_BY_SDK = (ToolError, ResourceError, MCPError)


@contextmanager
def _reasons(tool: str) -> Iterator[None]:
    """The last-resort net around a tool's body: a :class:`KprofError` that escaped it answers with
    its message, any other unexpected exception with :func:`_internal_error` — never the SDK's bare
    "Error executing tool <name>", which says nothing the caller can act on."""
    try:
        yield
    except _ANSWERED_BY_SDK:
        raise
    except KprofError as e:
        raise ToolError(str(e)) from None
    except Exception as e:  # noqa: BLE001 — the net: whatever it is, the caller gets a reason
        raise _internal_error(tool, e) from e


def _with_reason(fn: Callable[..., Any], tool: str) -> Callable[..., Any]:
    """``fn`` (a tool's function) run inside :func:`_reasons`; async stays async (the SDK awaits
    it), sync stays sync (the SDK runs it in a thread)."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def reasoned_async(*args: Any, **kwargs: Any) -> Any:
            with _reasons(tool):
                return await fn(*args, **kwargs)

        return reasoned_async

    @functools.wraps(fn)
    def reasoned(*args: Any, **kwargs: Any) -> Any:
        with _reasons(tool):
            return fn(*args, **kwargs)

    return reasoned


async def _bounded_errors(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
    """Server middleware: a failed tool call's text is cut to :data:`MAX_ERROR_CHARS`. kprof's own
    messages quote at most ~200 characters of any input (``safefs.clip``), but some texts are the
    SDK's: its argument-validation error lists every failing item with its value (a 10,000-entry
    list of the wrong type answers 1.8 MB), and "Unknown tool: <name>" quotes the name whole."""
    result = await call_next(ctx)
    if ctx.method != "tools/call" or not isinstance(result, dict) or not result.get("isError"):
        return result
    content = []
    for block in result.get("content") or []:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and len(text) > MAX_ERROR_CHARS:
            cut = f"… (cut: {len(text)} characters in all)"
            block = {**block, "text": text[: MAX_ERROR_CHARS - len(cut)] + cut}
        content.append(block)
    return {**result, "content": content}


class _ReasonedServer(MCPServer):
    """The MCP server: every tool registered through :func:`_with_reason`, every failed call's text
    bounded by :func:`_bounded_errors`, so no call answers without a reason, nor with a huge one."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, middleware=[_bounded_errors], **kwargs)

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, *args: Any, **kwargs: Any) -> None:
        super().add_tool(_with_reason(fn, name or fn.__name__), name, *args, **kwargs)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """The SDK's call, with arguments that fail the input schema answered in kprof's words
        (:func:`argument_words`) rather than pydantic's dump and its link to a web page."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError) and not isinstance(e, UnexpectedToolError):
                raise ToolError(argument_words(name, e.__cause__)) from e.__cause__
            raise


_SHOWN_ERRORS = 6  # argument errors worded one by one; the rest are counted
_MSG = {
    "missing": "is required",
    "list_type": 'should be a list (e.g. ["python", "train.py"] for a command)',
    "dict_type": "should be an object of name: value",
}


def argument_words(tool: str, exc: ValidationError) -> str:
    """Arguments that do not fit ``tool``'s input schema, one clause each: the argument (its path for
    nested items), what it should be, and the value given (clipped: it is the caller's own)."""
    errs = exc.errors(include_url=False)
    parts = []
    for err in errs[:_SHOWN_ERRORS]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "the arguments"
        msg = _MSG.get(
            err.get("type", ""), str(err.get("msg", "is not valid")).replace("Input should", "should")
        )
        if err.get("type") == "missing":
            parts.append(f"{where} {msg}")
            continue
        got = repr(err.get("input"))
        parts.append(f"{where} {msg} (got {got if len(got) <= 60 else got[:57] + '...'})")
    more = f"; and {len(errs) - _SHOWN_ERRORS} more" if len(errs) > _SHOWN_ERRORS else ""
    return (
        f"{tool}: invalid arguments: " + "; ".join(parts) + more + ". The tool's input schema (list_tools) "
        "gives each argument's type and range."
    )
