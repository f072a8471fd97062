"""Microsoft Teams through a workflow ("Post to a channel when a webhook request is
received"): a message with one Adaptive Card attachment, which such workflows post."""

from __future__ import annotations

from typing import Any

import orjson

from tracebox.alerts.channels import clip
from tracebox.alerts.message import Message

CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_VERSION = "1.4"  # rendered by Teams desktop, web and mobile


def _text(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def body(message: Message) -> bytes:
    blocks: list[dict[str, Any]] = [
        _text(clip(message.headline, 200), size="Medium", weight="Bolder"),
        _text(clip(message.title, 500), weight="Bolder"),
        _text(clip(message.text, 1000)),
    ]
    if message.top_frame:
        blocks.append(_text(clip(message.top_frame, 500), fontType="Monospace"))
    if message.facts:
        facts = [{"title": k, "value": clip(v, 300)} for k, v in message.facts]
        blocks.append({"type": "FactSet", "facts": facts})
    blocks += [_text(f"[{clip(i.title, 150)}]({i.url}) ({i.events} events)") for i in message.items]
    card = {
        "$schema": CARD_SCHEMA,
        "type": "AdaptiveCard",
        "version": CARD_VERSION,
        "body": blocks,
        "actions": [{"type": "Action.OpenUrl", "title": "Open in Tracebox", "url": message.url}],
    }
    attachment = {
        "contentType": "application/vnd.microsoft.card.adaptive",
        "contentUrl": None,
        "content": card,
    }
    return orjson.dumps({"type": "message", "attachments": [attachment]})
