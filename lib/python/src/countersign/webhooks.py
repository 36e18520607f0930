"""Verifies the webhooks Countersign POSTs to a batch's ``callbackUrl`` once it is settled.

They are signed the Standard Webhooks way (https://www.standardwebhooks.com): headers
``webhook-id``, ``webhook-timestamp`` and ``webhook-signature`` (``v1,<base64 HMAC-SHA256>`` of
``{id}.{timestamp}.{body}``, keyed with the agent key's ``whsec_…`` secret). Delivery is at
least once: deduplicate on ``webhook-id``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

#: how far the timestamp may be from now, either way, in seconds: older signatures are replays
DEFAULT_TOLERANCE = 300


class WebhookVerificationError(Exception):
    """The webhook is not from Countersign (or not for this secret), or is too old: answer 400."""


def verify_webhook(
    body: bytes | str,
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> dict[str, Any]:
    """Checks the signature of one delivery and returns its parsed payload
    (``{"type": "batch.decided", "timestamp": …, "data": <the batch>}``).

    ``body`` must be the raw request body, exactly as received (not re-serialized JSON);
    ``headers`` any mapping whose keys may be in any case. Raises WebhookVerificationError.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    message_id = lowered.get("webhook-id")
    timestamp = lowered.get("webhook-timestamp")
    signatures = lowered.get("webhook-signature")
    if not message_id or not timestamp or not signatures:
        raise WebhookVerificationError(
            "Missing webhook-id, webhook-timestamp or webhook-signature."
        )
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a number.") from None
    current = time.time() if now is None else now
    if abs(current - sent_at) > tolerance:
        raise WebhookVerificationError(
            f"webhook-timestamp is {int(current - sent_at)} s from now (tolerance {tolerance} s)."
        )

    payload = body.decode("utf-8") if isinstance(body, bytes) else body
    signed = f"{message_id}.{sent_at}.{payload}".encode()
    expected = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    for entry in signatures.split():
        version, _, encoded = entry.partition(",")
        if version != "v1":
            continue
        try:
            given = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(given, expected):
            parsed: dict[str, Any] = json.loads(payload)
            return parsed
    raise WebhookVerificationError("No webhook-signature matches this secret.")


def _key(secret: str) -> bytes:
    encoded = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("The webhook secret is not a whsec_… base64 secret.") from None
