"""The streamable-HTTP transport: bearer-token authentication (token file or environment), the
disconnect watch that lets a waiting tool call see its client gone, and the ASGI app."""

from __future__ import annotations

from typing import Mapping

from mcp.server.mcpserver import Context, MCPServer

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_CHARS = 16


class TokenError(Exception):
    """The bearer token cannot be used; the message says what to do."""


def read_token(token_file: str | None, environ: Mapping[str, str]) -> str | None:
    """The bearer token from ``--token-file`` or ``KPROF_MCP_TOKEN``; None when neither is given.
    A token that is given but empty (or blank) is an error, never "no authentication": an empty
    file or variable is a mistake, and turning authentication off silently would hide it."""
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.read(4096).strip()
        except FileNotFoundError:
            raise TokenError(f"--token-file {token_file}: no such file") from None
        except (OSError, UnicodeDecodeError) as e:
            raise TokenError(
                f"--token-file {token_file}: cannot read it ({getattr(e, 'strerror', None) or e})"
            ) from None
        where = f"--token-file {token_file}"
    elif "KPROF_MCP_TOKEN" in environ:
        token, where = environ["KPROF_MCP_TOKEN"].strip(), "KPROF_MCP_TOKEN"
    else:
        return None
    if not token:
        raise TokenError(
            f"{where} is empty: give a token of at least {MIN_TOKEN_CHARS} characters (e.g. "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`), or leave it unset to "
            "serve loopback without authentication"
        )
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise TokenError(f"{where}: a token must be at least {MIN_TOKEN_CHARS} characters with no whitespace")
    return token


class _Exchange:
    """One HTTP request as :class:`DisconnectWatch` saw it."""

    __slots__ = ("answered", "dropped")

    def __init__(self) -> None:
        self.answered = False  # the response's last body part was sent
        self.dropped = False  # the client disconnected before that


EXCHANGE = "kprof.exchange"  # the ASGI scope key DisconnectWatch puts an _Exchange under


class DisconnectWatch:
    """ASGI middleware: notes in the request's scope when its client disconnects before the response
    ended. A tool call over streamable HTTP answers on an SSE stream; when the client drops that
    connection, the SDK (2025-era sessions) ends the stream but goes on running the call, so a job
    would keep the GPU until its time limit. :func:`connection_dropped` lets the call see it. The
    disconnect is seen by whoever reads ``receive`` (the SSE response listens for it)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = scope[EXCHANGE] = _Exchange()

        async def receive_watched():
            message = await receive()
            if message["type"] == "http.disconnect" and not exchange.answered:
                exchange.dropped = True
            return message

        async def send_watched(message):
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                exchange.answered = True
            await send(message)

        await self.app(scope, receive_watched, send_watched)


def connection_dropped(ctx: Context) -> bool:
    """Whether the HTTP connection carrying this tool call went away before its answer (never over
    stdio, where the request carries no HTTP request)."""
    scope = getattr(ctx.request_context.request, "scope", None)
    exchange = scope.get(EXCHANGE) if isinstance(scope, dict) else None
    return exchange is not None and exchange.dropped


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (constant-time
    comparison); others get 401 before reaching MCP."""

    def __init__(self, app, token: str):
        self.app, self._token = app, token.encode()

    async def __call__(self, scope, receive, send):
        import hmac

        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not (got.startswith(b"Bearer ") and hmac.compare_digest(got[7:].strip(), self._token)):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="kprof-mcp"'),
                        ],
                    }
                )
                await send(
                    {
                        "type": "http.response.body",
                        "body": b'{"error": "missing or wrong bearer token (Authorization: Bearer <token>)"}',
                    }
                )
                return
        await self.app(scope, receive, send)


MCP_PATH = "/mcp"  # the SDK's default streamable-HTTP path


def serving_line(host: str, port: int, token: str | None) -> str:
    """The one line the server prints on stderr as it starts serving over HTTP: the URL a
    client connects to (IPv6 addresses in brackets) and whether it needs the bearer token."""
    h = f"[{host}]" if ":" in host and not host.startswith("[") else host
    url = f"http://{h}:{port}{MCP_PATH}" if port else f"http://{h}:<port chosen by the OS>{MCP_PATH}"
    return f"kprof-mcp: serving MCP over streamable HTTP at {url}" + (
        " (Authorization: Bearer <token> required)" if token else ""
    )


def http_app(
    server: MCPServer,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: list[str],
    allowed_origins: list[str],
):
    """The streamable-HTTP app with DNS-rebinding protection (Host and Origin checked against
    allow-lists: loopback names by default), dropped connections noted (:class:`DisconnectWatch`)
    and, when a token is given, bearer authentication. Refuses a non-loopback bind without a token."""
    from mcp.server.transport_security import TransportSecuritySettings

    if host not in LOOPBACK and not token:
        raise SystemExit(
            f"kprof-mcp: refusing to serve HTTP on {host}: binding to anything but 127.0.0.1/localhost "
            "requires a bearer token (set KPROF_MCP_TOKEN or pass --token-file)"
        )
    hosts = (
        ["127.0.0.1:*", "localhost:*", "[::1]:*"]
        + ([f"{host}:{port}", f"{host}:*"] if host not in LOOPBACK else [])
        + list(allowed_hosts)
    )
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"] + list(allowed_origins)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app = DisconnectWatch(
        server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security, host=host)
    )
    return BearerAuth(app, token) if token else app
