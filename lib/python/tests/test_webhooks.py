"""Webhook signatures: a real delivery from the server verifies; tampering, another secret and
an old timestamp do not."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

import pytest

from countersign import WebhookVerificationError, verify_webhook

from .conftest import Team, one_call, receiver


def test_a_real_delivery_verifies_and_a_forged_one_does_not(team: Team) -> None:
    server, received = receiver()
    try:
        client = team.client()
        url = f"http://127.0.0.1:{server.server_address[1]}/hooks/countersign"
        run = client.create_run({"batch": {"calls": [one_call()], "callbackUrl": url}})
        team.reviewer.decide_batch(team.reviewer.batch(), "approve")
        body, headers = received.get(timeout=15)
    finally:
        server.shutdown()

    payload = verify_webhook(body, headers, team.webhook_secret)
    assert payload["type"] == "batch.decided"
    assert payload["data"]["id"] == run["batches"][0]["id"]
    assert payload["data"]["outcome"] == "approved"

    with pytest.raises(WebhookVerificationError):
        verify_webhook(body.replace(b"approved", b"rejected"), headers, team.webhook_secret)
    other_secret = "whsec_" + base64.b64encode(b"0" * 24).decode()
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, headers, other_secret)
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify_webhook(body, headers, team.webhook_secret, now=time.time() + 3600)
    without = {k: v for k, v in headers.items() if k.lower() != "webhook-signature"}
    with pytest.raises(WebhookVerificationError, match="Missing"):
        verify_webhook(body, without, team.webhook_secret)


def test_any_of_several_signatures_may_match() -> None:
    # During a secret rotation the header carries one signature per secret, space-separated.
    secret = base64.b64encode(b"k" * 24).decode()
    body = '{"type":"batch.decided"}'
    now = int(time.time())
    digest = hmac.new(b"k" * 24, f"msg_1.{now}.{body}".encode(), hashlib.sha256).digest()
    headers = {
        "Webhook-Id": "msg_1",
        "Webhook-Timestamp": str(now),
        "Webhook-Signature": f"v1,{base64.b64encode(b'x' * 32).decode()} v1,{base64.b64encode(digest).decode()}",
    }
    assert verify_webhook(body, headers, f"whsec_{secret}") == {"type": "batch.decided"}
