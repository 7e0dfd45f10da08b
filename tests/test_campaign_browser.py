"""The Campaign tab in Debian's headless Chromium with three signed-in evaluators at once: each sees only their own
queue, blind (no condition, no verdict, no item id anywhere in their page), scores with the keyboard, goes back to
change a score; a non-admin is refused the admin view, the admin sees progress and agreement. Screenshots go to
artifacts/."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from costa.campaign.db import CampaignDb
from costa.campaign.stats import agreement
from costa.store import Store
from tests.app_server import chromium, running_app
from tests.test_campaign_cli import costa, write_tasks

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
USERS = {"ann": "pw-ann", "bob": "pw-bob", "cy": "pw-cy", "boss": "pw-boss"}
#: costa's verdict words and the words of its own report: none may be on an evaluator's card.
VERDICT_WORDS = ("done", "proposed", "unverified", "skipped", "failed", "quality", "passed", "verified", "seconds")


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per module (`tests.app_server.chromium`)."""
    with chromium() as b:
        yield b


def signed_in(browser, url: str, user: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    r = context.request.post(url + "login", form={"username": user, "password": USERS[user]})
    assert r.ok, r.status
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#status >> text=Running on", timeout=90_000)
    page.get_by_role("tab", name="Campaign", exact=True).click()
    return context, page


def open_queue(page, name: str) -> None:
    page.click("#cmp-campaign input")
    page.click(f"#cmp-campaign li[aria-label={name}]")
    assert page.input_value("#cmp-who textarea") in USERS  # the signed-in user, not typed
    page.click("#cmp-open")


def scored(page) -> tuple[int, int]:
    m = re.search(r"(\d+) of (\d+) scored", page.inner_text("#cmp-progress"))
    assert m, page.inner_text("#cmp-progress")
    return int(m.group(1)), int(m.group(2))


def test_three_evaluators_score_blind_at_once(browser, tmp_path: Path) -> None:
    home = tmp_path / "home"
    tasks = write_tasks(tmp_path / "set")
    r = costa(home, "create", "blind", "--tasks", str(tasks), "--conditions", "alpha=0,2; reflect=off",
              "--evaluators", "ann,bob,cy", "--admins", "boss")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert costa(home, "run", "blind").returncode == 0
    db = CampaignDb(Store(home))
    items = db.items("blind")
    units = db.units("blind")
    queues = db.assigned("blind")
    secrets = {i.id for i in items} | {"alpha=0", "alpha=2", "reflect=off", "α=0", "α=2"}
    secrets |= {u.tool for u in units if u.tool}
    auth = ",".join(f"{u}:{p}" for u, p in USERS.items())
    with running_app(home, extra_env={"COSTA_AUTH": auth}) as app:
        pages = {u: signed_in(browser, app.url, u) for u in ("ann", "bob", "cy")}
        for _, page in pages.values():  # three sessions open their queues at the same time
            open_queue(page, "blind")
        totals = {}
        for user, (_, page) in pages.items():
            page.wait_for_selector("#cmp-progress >> text=scored", timeout=60_000)
            mine = {(i, u.unit) for i in queues[user] for u in units if u.item_id == i}
            assert scored(page) == (0, len(mine))  # only their own queue
            totals[user] = len(mine)
            assert f"Item 1 of {len(queues[user])} ·" in page.inner_text("#cmp-progress")
        # score everything with the keyboard, the three in turn: F, 7, X … (each key saves and moves on)
        keys = ["f", "7", "x", "5", "9", "f", "3", "f", "0", "8"]
        for step in range(max(totals.values())):
            for user, (_, page) in pages.items():
                if step < totals[user]:
                    page.keyboard.press(keys[(step + len(user)) % len(keys)])
            for user, (_, page) in pages.items():
                if step < totals[user]:
                    page.wait_for_selector(f"#cmp-progress >> text={step + 1} of {totals[user]} scored",
                                           timeout=60_000)  # fmt: skip
                    check_blind(page, secrets)
        ARTIFACTS.mkdir(exist_ok=True)
        for user, (_, page) in pages.items():
            page.screenshot(path=str(ARTIFACTS / f"campaign-{user}.png"), full_page=True)

        # ann goes back one subtask and changes her score with the comment box
        _, ann = pages["ann"]
        last = totals["ann"]
        ann.keyboard.press("ArrowLeft")
        ann.wait_for_selector(f"#cmp-progress >> text=subtask {last - 1} of {last}", timeout=30_000)
        ann.wait_for_selector("#cmp-current >> text=Your score", timeout=30_000)
        ann.fill("#cmp-comment textarea", "changed my mind")
        ann.click("#cmp-progress")  # leave the comment box: keys score again
        ann.keyboard.press("2")
        ann.wait_for_selector(f"#cmp-progress >> text=subtask {last} of {last}", timeout=30_000)
        deadline = time.time() + 30
        while time.time() < deadline and not any(s.comment == "changed my mind" for s in db.scores("blind", "ann")):
            time.sleep(0.2)
        changed = [s for s in db.scores("blind", "ann") if s.comment == "changed my mind"]
        assert len(changed) == 1 and changed[0].score == 0.2
        assert len(db.scores("blind", "ann")) == totals["ann"]  # replaced, not added

        # a non-admin asks for the admin view and is refused; it stays empty
        ann.click("text=Admin: progress per evaluator")
        ann.click("#cmp-admin-show")
        ann.wait_for_selector("text=only the admins of campaign", timeout=30_000)
        assert "Agreement" not in ann.inner_text("#cmp-admin")  # a warning toast, nothing shown
        check_blind(ann, secrets)

        # the admin sees progress per evaluator and the agreement so far, the same as an independent computation
        boss_ctx, boss = signed_in(browser, app.url, "boss")
        boss.click("#cmp-campaign input")
        boss.click("#cmp-campaign li[aria-label=blind]")
        boss.click("text=Admin: progress per evaluator")
        boss.click("#cmp-admin-show")
        boss.wait_for_selector("#cmp-admin >> text=Agreement so far", timeout=60_000)
        admin = boss.inner_text("#cmp-admin")
        for user in ("ann", "bob", "cy"):
            assert re.search(rf"{user}\s+{totals[user]}\s+{totals[user]}\s", admin), admin
        alpha = agreement(db.scores("blind")).krippendorff_alpha_interval
        assert alpha is not None and f"{alpha:.3f}" in admin
        assert "alpha=0" in admin and "alpha=2" in admin  # the admin view does show the conditions
        boss.wait_for_selector("#cmp-plot img", timeout=30_000)
        boss.screenshot(path=str(ARTIFACTS / "campaign-admin.png"), full_page=True)
        for ctx, _ in pages.values():
            ctx.close()
        boss_ctx.close()
    report = json.loads(costa(home, "report", "blind", "--json").stdout)
    assert sum(r["n_items"] for r in report["conditions"]) == len(items)


def check_blind(page, secrets: set[str]) -> None:
    """Nothing on the evaluator's page names the condition, an item id or a tool; the card has no verdict words."""
    html = page.content()
    leaked = sorted(s for s in secrets if s in html)
    assert not leaked, leaked
    card = " ".join(page.inner_text(sel) for sel in ("#cmp-progress", "#cmp-card")).lower()
    words = sorted(w for w in VERDICT_WORDS if re.search(rf"\b{w}\b", card))
    assert not words, (words, card)
