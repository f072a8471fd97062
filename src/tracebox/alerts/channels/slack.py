"""Slack incoming webhooks, and the Slack-compatible ones of Mattermost and Rocket.Chat.

``text`` plus one legacy attachment (title, link, fields, colour): the one shape all
three render. Slack's control characters are escaped, so an error message cannot
inject a link or an @channel mention.
"""

from __future__ import annotations

import orjson

from tracebox.alerts.channels import clip
from tracebox.alerts.message import Message

COLORS = {"storm": "#b45309", "release_health": "#b45309", "test": "#2563eb"}
DEFAULT_COLOR = "#dc2626"
MAX_TEXT = 3000  # Slack's section text limit; attachments allow more, readers less


def escape(text: str) -> str:
    """Slack's three control characters (api.slack.com "Escaping text")."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, label: str) -> str:
    return f"<{url}|{escape(label).replace('|', '¦')}>"


def body(message: Message) -> bytes:
    lines = [escape(message.text)]
    if message.top_frame:
        lines.append(f"`{escape(message.top_frame)}`")
    lines += [f"• {link(i.url, clip(i.title, 150))} ({i.events} events)" for i in message.items]
    attachment = {
        "fallback": escape(f"{message.headline}: {message.title}"),
        "color": COLORS.get(message.kind, DEFAULT_COLOR),
        "title": escape(clip(message.title, 250)),
        "title_link": message.url,
        "text": clip("\n".join(lines), MAX_TEXT),
        "fields": [
            {"title": escape(k), "value": escape(clip(v, 300)), "short": True}
            for k, v in message.facts
        ],
        "footer": escape(f"Tracebox · {message.project['path']}"),
    }
    text = f"*{escape(message.headline)}*: {link(message.url, clip(message.title, 200))}"
    return orjson.dumps({"text": text, "attachments": [attachment]})
