"""``layout set --from pretix --pretix ...`` on the real pretix: the event's designer layouts stored in the venue's
Redis (pretix's default one as ``default``), pretix's product assignments as rules, a layout's background PDF drawn
under the badge."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageOps

from cli.redis_server import RedisServer
from tests.pretix.server import free_loopback_port
from tests.support.pretix_server import Pretix
from tests.support.processes import badge_agent


def test_the_event_s_layouts_and_their_products_are_set_and_print_with_the_background(
    pretix: Pretix, token_file: Path, redis_server: RedisServer, venue: str, tmp_path: Path
) -> None:
    fleet = ["--redis", redis_server.url, "--venue", venue]
    source = ["--from", "pretix", "--pretix", pretix.url, "--event", f"{pretix.organizer}/{pretix.event}"]
    done = badge_agent("layout", "set", *source, "--token-file", str(token_file), *fleet)
    assert done.returncode == 0, done.stderr
    assert "layout default v1 set from pretix" in done.stdout
    assert "layout speaker v1 set from pretix; ticket_type Speaker -> speaker" in done.stdout
    assert pretix.token not in done.stdout + done.stderr
    assert "ticket_type=Speaker -> speaker" in badge_agent("layout", "rules", *fleet).stdout
    assert {"default", "speaker"} <= set(badge_agent("layout", "list", *fleet).stdout.split())

    out = tmp_path / "speaker.png"
    job = {"attendee_id": "A-1", "name": "Ahmed Al-Sayed", "fields": {"ticket_type": "Speaker"}}
    shown = badge_agent("layout", "preview", "speaker", "--job", json.dumps(job), "-o", str(out), *fleet)
    assert shown.returncode == 0, shown.stderr
    image = ImageOps.invert(Image.open(out).convert("L"))
    dots = image.width / 90  # the layout is pretix's 90 x 54 mm page
    assert image.crop((0, round(1 * dots), image.width, round(19 * dots))).getextrema() == (255, 255)  # the band
    assert image.crop((0, round(22 * dots), image.width, image.height)).getextrema()[0] == 0  # white below it

    again = badge_agent("layout", "set", *source, "--token-file", str(token_file), *fleet)
    assert "layout speaker v2 set from pretix" in again.stdout  # a new version each time, as any layout set
    nobody = ["--pretix", f"http://127.0.0.1:{free_loopback_port()}"]
    away = badge_agent("layout", "set", "--from", "pretix", *nobody, "--event", "a/b", "--token-file", str(token_file),
                       *fleet)  # fmt: skip
    assert away.returncode == 69 and "cannot be reached" in away.stderr
    bare = badge_agent("layout", "set", "--pretix", pretix.url, *fleet)
    assert bare.returncode == 2 and "--from pretix" in bare.stderr
