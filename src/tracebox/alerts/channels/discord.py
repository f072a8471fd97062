"""Discord webhooks: one embed within Discord's limits; mentions are never parsed, so
an error message saying "@everyone" pings no one."""

from __future__ import annotations

import orjson

from tracebox.alerts.channels import clip
from tracebox.alerts.message import Message

# Discord's embed limits (developer docs, "Embed Limits").
TITLE, DESCRIPTION, FIELD_NAME, FIELD_VALUE, FIELDS = 256, 4096, 256, 1024, 25
COLORS = {"storm": 0xB45309, "release_health": 0xB45309, "test": 0x2563EB}
DEFAULT_COLOR = 0xDC2626


def body(message: Message) -> bytes:
    lines = [message.text]
    if message.top_frame:
        lines.append(f"`{message.top_frame}`")
    lines += [f"• [{clip(i.title, 150)}]({i.url}) ({i.events} events)" for i in message.items]
    embed = {
        "title": clip(message.title, TITLE),
        "url": message.url,
        "description": clip("\n".join(lines), DESCRIPTION),
        "color": COLORS.get(message.kind, DEFAULT_COLOR),
        "fields": [
            {"name": clip(k, FIELD_NAME), "value": clip(v, FIELD_VALUE) or "-", "inline": True}
            for k, v in message.facts[:FIELDS]
        ],
        "footer": {"text": f"Tracebox · {message.project['path']}"},
    }
    return orjson.dumps(
        {
            "content": clip(message.headline, 2000),
            "embeds": [embed],
            "allowed_mentions": {"parse": []},
        }
    )
