"""Every failure the client reports is a CountersignError.

The API's own errors keep their contract code (``already_decided``, ``claim_lost``…); the client
adds a few codes of its own, with status 0, for what never got an answer:

- ``network_error``: no answer (connection refused or dropped, DNS, a request timeout), after retries
- ``wait_timeout``: ``wait_for_decision``'s ``timeout`` passed with the batch still pending
- ``invalid_response``: an answer that is not the contract's JSON (a proxy's error page, say)

``API_ERROR_CODES`` lists the API's codes (``ApiErrorCode`` is their Literal), generated from the
server's; a newer server may send a code this list does not have yet, passed through as is.
"""

from __future__ import annotations

from typing import Any

from ._contract import API_ERROR_CODES, ApiErrorCode

__all__ = ["API_ERROR_CODES", "ApiErrorCode", "CountersignError", "error_from_response"]


class CountersignError(Exception):
    """An API error (``status`` is its HTTP status) or a client one (``status`` 0)."""

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        current: Any = None,
        issues: list[dict[str, Any]] | None = None,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        #: on a 409: the resource as it is now, so the caller can refresh without another request
        self.current = current
        #: on a 400 ``invalid_request``: what was wrong, field by field (``path``, ``message``)
        self.issues = issues or []
        #: the error body's other fields (``holder`` and ``leaseExpiresAt`` on ``already_claimed``…)
        self.details = details or {}
        #: the Retry-After of a 429 or 503, in seconds
        self.retry_after = retry_after

    def is_code(self, code: str) -> bool:
        return self.code == code

    def __repr__(self) -> str:
        return (
            f"CountersignError(status={self.status}, code={self.code!r}, message={self.message!r})"
        )


def error_from_response(status: int, body: Any, retry_after: float | None) -> CountersignError:
    """The error for a non-2xx answer, from its status and (possibly non-JSON) body."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return CountersignError(
            status=status,
            code="rate_limited" if status == 429 else "invalid_response",
            message=f"The server answered {status} without a Countersign error body.",
            retry_after=retry_after,
        )
    fields = dict(error)
    code = fields.pop("code")
    message = fields.pop("message", None)
    current = fields.pop("current", None)
    issues = fields.pop("issues", None)
    return CountersignError(
        status=status,
        code=code,
        message=message if isinstance(message, str) else f"The server answered {status} ({code}).",
        current=current,
        issues=issues if isinstance(issues, list) else [],
        details=fields,
        retry_after=retry_after,
    )
