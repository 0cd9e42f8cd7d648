"""The screenshots of docs/img/ from a running app (`make run`), in headless Chromium (Debian's /usr/bin/chromium).

    .venv/bin/python scripts/docs_screenshots.py --study "Demo: DailyDialog multi-reference (Gupta et al. 2019)"

Logs in as the demo researcher, opens the study's correlation report (the page computes it when it is not
stored yet and shows a progress bar: the script waits for the table), and saves the top of the "Metrics vs
human" tab as docs/img/report.png at 1280 px wide, the width the README shows. Score the study first, e.g.
`manage.py score_study "<study>" --metrics bleu-2,meteor,rouge-l --references multi --sync` and again with
`--references single`, so that the report has rows.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--username", default="researcher")
    parser.add_argument("--password", default="researcher-demo")
    parser.add_argument("--study", required=True, help="the study's name, as its page shows it")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    arguments = parser.parse_args()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1500})
        page.goto(f"{arguments.base_url}/accounts/login/")
        page.fill("input[name=username]", arguments.username)
        page.fill("input[name=password]", arguments.password)
        page.click("button[type=submit]")
        page.goto(f"{arguments.base_url}/studies/")
        link = page.get_by_role("link", name=arguments.study, exact=True)
        href = link.get_attribute("href") or ""
        found = re.search(r"/studies/(\d+)/", href)
        if found is None:
            sys.exit(f"no study called {arguments.study!r} among {arguments.username}'s studies")
        page.goto(f"{arguments.base_url}/reports/{found.group(1)}/")
        page.wait_for_selector("#utterance-table", timeout=600_000)  # computed by the page or a worker
        page.wait_for_selector("[data-figure='quantiles'] .main-svg", timeout=60_000)
        arguments.out.mkdir(parents=True, exist_ok=True)
        page.screenshot(
            path=str(arguments.out / "report.png"), clip={"x": 0, "y": 0, "width": 1280, "height": 1500}
        )
        browser.close()
    print(f"saved {arguments.out / 'report.png'}")


if __name__ == "__main__":
    main()
