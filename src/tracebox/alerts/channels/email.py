"""Email over SMTP (``TRACEBOX_SMTP_*``): STARTTLS, implicit TLS or plain; a plain-text
and an HTML part with the link to the error, its top frame and counts, and the link to
the recipient's notification settings (also as ``List-Unsubscribe``)."""

from __future__ import annotations

import functools
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from typing import TYPE_CHECKING

from tracebox.alerts.channels import clip
from tracebox.alerts.message import Message
from tracebox.alerts.outbound import Answer
from tracebox.config import Settings

if TYPE_CHECKING:
    import jinja2

NOT_CONFIGURED = "SMTP is not configured: set TRACEBOX_SMTP_HOST (docs/alerts.md)"

_HTML = """<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1f2937">
<p style="color:#6b7280;margin:0">{{ m.headline }}</p>
<h2 style="margin:4px 0 8px"><a href="{{ m.url }}" style="color:#1d4ed8">{{ m.title }}</a></h2>
<p>{{ m.text }}</p>
{% if m.top_frame %}<pre style="background:#f3f4f6;padding:8px">{{ m.top_frame }}</pre>{% endif %}
{% if m.facts %}<table cellpadding="4" style="border-collapse:collapse">
{% for k, v in m.facts %}<tr><th align="left">{{ k }}</th><td>{{ v }}</td></tr>{% endfor %}
</table>{% endif %}
{% if m.items %}<ol>{% for i in m.items %}<li><a href="{{ i.url }}">{{ i.title }}</a>
({{ i.events }} events)</li>{% endfor %}</ol>{% endif %}
<p><a href="{{ m.url }}">Open in Tracebox</a></p>
<p style="color:#6b7280;font-size:12px">You receive this because of your notification
settings for {{ m.project.path }}.
<a href="{{ m.settings_url }}">Change your notification settings or unsubscribe</a>.</p>
</body></html>"""


@functools.cache
def _html() -> jinja2.Template:
    import jinja2  # on the first email: the background process need not hold it (~2 MB)

    return jinja2.Environment(autoescape=True).from_string(_HTML)


@dataclass(frozen=True)
class SmtpOptions:
    host: str = ""
    port: int = 587
    security: str = "starttls"  # starttls | tls | none
    username: str = ""
    password: str = ""
    sender: str = "Tracebox <tracebox@localhost>"
    timeout_s: float = 10.0
    ca_file: str = ""

    @classmethod
    def from_settings(cls, s: Settings) -> SmtpOptions:
        return cls(
            s.smtp_host,
            s.smtp_port,
            s.smtp_security,
            s.smtp_username,
            s.smtp_password,
            s.smtp_from,
            s.smtp_timeout_seconds,
            s.smtp_ca_file,
        )

    def __repr__(self) -> str:  # never show the password
        return f"SmtpOptions({self.host!r}, {self.port}, {self.security!r})"


def text_part(m: Message) -> str:
    lines = [m.headline, "", m.title, "", m.text]
    if m.top_frame:
        lines += ["", f"  {m.top_frame}"]
    if m.facts:
        lines += [""] + [f"{k}: {v}" for k, v in m.facts]
    for n, item in enumerate(m.items, 1):
        lines.append(f"{n}. {item.title} ({item.events} events)\n   {item.url}")
    lines += ["", f"Open in Tracebox: {m.url}", "", "--"]
    lines.append(f"Change your notification settings or unsubscribe: {m.settings_url}")
    return "\n".join(lines) + "\n"


def compose(m: Message, options: SmtpOptions, to: str, key: str) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = clip(f"[{m.project['path']}] {m.headline.split(' in ')[0]}: {m.title}", 200)
    msg["From"] = options.sender
    msg["To"] = to
    msg["Date"] = formatdate(localtime=False)
    domain = options.sender.rsplit("@", 1)[-1].strip(">") or "tracebox"
    msg["Message-ID"] = f"<{key}@{domain}>"  # the same for every attempt: receivers dedupe
    msg["List-Unsubscribe"] = f"<{m.settings_url}>"
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Tracebox-Project"] = m.project["path"]
    msg.set_content(text_part(m))
    msg.add_alternative(_html().render(m=m), subtype="html")
    return msg


def send(m: Message, options: SmtpOptions, to: str, key: str) -> Answer:
    """Send one message; SMTP 5xx answers are permanent, 4xx and connection trouble not."""
    if not options.host:
        return Answer(False, error=NOT_CONFIGURED, permanent=True)
    msg = compose(m, options, to, key)
    try:
        with _connect(options) as smtp:
            if options.username:
                smtp.login(options.username, options.password)
            refused = smtp.send_message(msg, to_addrs=[to])
    except smtplib.SMTPRecipientsRefused as e:
        code, text = next(iter(e.recipients.values()))
        return _refused(code, text)
    except smtplib.SMTPResponseException as e:
        return _refused(e.smtp_code, e.smtp_error)
    except (smtplib.SMTPException, OSError) as e:
        return Answer(False, error=f"SMTP {options.host}:{options.port}: {e}"[:500])
    if refused:
        code, text = refused[to]
        return _refused(code, text)
    return Answer(True, 250, "accepted")


def _refused(code: int, text: bytes | str) -> Answer:
    reply = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return Answer(False, code, reply[:1000], f"SMTP {code}: {reply}"[:500], permanent=code >= 500)


def _connect(o: SmtpOptions) -> smtplib.SMTP:
    if o.security == "tls":
        return smtplib.SMTP_SSL(o.host, o.port, timeout=o.timeout_s, context=_tls(o))
    smtp = smtplib.SMTP(o.host, o.port, timeout=o.timeout_s)
    try:
        if o.security == "starttls":
            smtp.starttls(context=_tls(o))
    except BaseException:
        smtp.close()
        raise
    return smtp


def _tls(o: SmtpOptions) -> ssl.SSLContext:
    """Certificates are verified, against ``TRACEBOX_SMTP_CA_FILE`` or the system's."""
    return ssl.create_default_context(cafile=o.ca_file or None)
