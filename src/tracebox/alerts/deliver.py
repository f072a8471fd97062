"""Send one message through one channel, and what to do with the answer."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracebox.alerts.channels import discord, email, slack, teams, webhook
from tracebox.alerts.message import Message
from tracebox.alerts.outbound import Answer, OutboundOptions, post
from tracebox.config import Settings
from tracebox.errors import TraceboxError
from tracebox.store.alert_outbox import FAILED, RETRYING, SENT
from tracebox.store.alerts import AlertAction, Channel
from tracebox.tracking.crypto import TokenCipher
from tracebox.tracking.instance_secret import instance_secret

if TYPE_CHECKING:
    import httpx

CIPHER_INFO = b"tracebox alert targets v1"  # its own key, not the external tokens' one
CHAT_BODIES = {Channel.SLACK: slack.body, Channel.DISCORD: discord.body, Channel.TEAMS: teams.body}


@dataclass(frozen=True)
class SendContext:
    base_url: str  # TRACEBOX_EXTERNAL_URL: links in messages
    outbound: OutboundOptions
    smtp: email.SmtpOptions
    cipher: TokenCipher
    transport: httpx.BaseTransport | None = None  # tests only

    @classmethod
    def from_settings(cls, s: Settings) -> SendContext:
        return cls(
            s.external_url,
            OutboundOptions.from_settings(s),
            email.SmtpOptions.from_settings(s),
            target_cipher(s),
        )


def target_cipher(s: Settings) -> TokenCipher:
    return TokenCipher(instance_secret(s), info=CIPHER_INFO)


def send(
    ctx: SendContext,
    channel: Channel,
    message: Message,
    *,
    action: AlertAction | None,
    recipient: str,
    key: str,
    now: float,
) -> Answer:
    """Deliver ``message``; failures come back as an ``Answer``, never raised."""
    if channel == Channel.EMAIL:
        return email.send(message, ctx.smtp, recipient, key)
    if action is None:
        return Answer(False, error="The action was deleted", permanent=True)
    try:
        url = ctx.cipher.decrypt(action.target)
        if channel == Channel.WEBHOOK:
            secret = ctx.cipher.decrypt(action.encrypted_secret or "")
            payload = webhook.body(message, key, now)
            headers = webhook.headers(secret, key, message.kind, payload, now)
        else:
            payload, headers = CHAT_BODIES[channel](message), {}
    except TraceboxError as e:  # a target stored under another secret key
        return Answer(False, error=e.message, permanent=True)
    return post(url, payload, headers, ctx.outbound, ctx.transport)


@dataclass(frozen=True)
class Backoff:
    initial_s: float = 30.0
    max_s: float = 3600.0

    def delay(self, attempts: int) -> float:
        """Exponential (doubling from ``initial_s``, capped), with ±10% jitter so a
        receiver coming back is not hit by every delivery at once."""
        base = min(self.initial_s * 2.0 ** max(0, attempts - 1), self.max_s)
        return float(base * random.uniform(0.9, 1.1))


@dataclass(frozen=True)
class Outcome:
    status: str
    next_attempt_at: float | None
    error: str | None


def outcome(answer: Answer, attempts: int, now: float, deadline: float, b: Backoff) -> Outcome:
    """Sent, retry later (Retry-After first, else backoff) or failed for good."""
    if answer.ok:
        return Outcome(SENT, None, None)
    if answer.permanent:
        return Outcome(FAILED, None, answer.error)
    wait = answer.retry_after if answer.retry_after is not None else b.delay(attempts)
    if now + wait > deadline:
        return Outcome(FAILED, None, f"{answer.error} (no more retries: the retry period ended)")
    return Outcome(RETRYING, now + wait, answer.error)
