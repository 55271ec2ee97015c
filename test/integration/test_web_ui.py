"""The Galaxy that `make serve` starts, as a person sees it: a clean start, Galaxy's web UI, a login,
and an agent's work (driven through /api/mcp) visible in a real browser (issue 39).

The browser is Debian's chromium (.ci/install-chromium; CI's sqlite pass installs it), driven by
playwright through ``executable_path`` (playwright's own browser download is never used). Each step's
screenshot is kept in ``<basetemp>/screenshots/`` for a person to look at; the path is printed.
"""

import re
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CHROMIUM = next((path for path in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(path).exists()),
                shutil.which("chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: How long a page may take to show what is awaited (Galaxy's client loads its bundles, then polls).
UI_TIMEOUT_MS = 60_000

COUNTS = {"SA01": "gene\tcount\nmecA\t3\nblaZ\t11\n", "SA02": "gene\tcount\nmecA\t5\nblaZ\t17\n"}
MARKDOWN_LINE = "Resistance genes **counted** by an agent, per isolate."


def test_a_fresh_start_prints_no_error_and_no_traceback(galaxy):
    """The session's Galaxy is a fresh `make serve` start (same launcher, new data dir): up to its
    banner its output has no ERROR line and no traceback."""
    log = galaxy.log_text()
    assert "\nMCP    " in log, log[-3000:]
    start_up = log[: log.index("\nMCP    ")]
    bad = [line for line in start_up.splitlines() if re.search(r"\bERROR\b|Traceback \(most recent call last\)", line)]
    assert bad == [], "\n".join(bad[:40])


def test_server_json_has_a_login_for_the_demo_user_and_the_admin(galaxy):
    info = galaxy.info
    assert (info["demo_email"], info["admin_email"]) == ("demo@example.org", "admin@example.org"), info
    assert len(info["demo_password"]) >= 12 and len(info["admin_password"]) >= 12
    assert info["demo_password"] != info["admin_password"]
    for key in ("galaxy_url", "mcp_url", "api_key", "admin_api_key"):  # the keys it always had
        assert info[key], info


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    directory = tmp_path_factory.getbasetemp() / "screenshots"
    directory.mkdir(exist_ok=True)
    print(f"\nscreenshots of the web UI test: {directory}")
    return directory


@pytest.fixture(scope="module")
def page_in_browser():
    if CHROMIUM is None:
        pytest.skip("no chromium here (/usr/bin/chromium): run .ci/install-chromium (CI's sqlite pass does)")
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=UI_TIMEOUT_MS)
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(UI_TIMEOUT_MS)
        try:
            yield context.new_page()
        finally:
            context.close()
            browser.close()


@pytest.fixture(scope="module")
def analysis(mcp, api_key):
    """A small analysis driven through /api/mcp: pasted tables, a list collection, a tool mapped over it,
    an errored job, and a notebook page with an embedded table and markdown."""
    call = lambda tool, **arguments: mcp.call_ok(tool, api_key=api_key, **arguments)  # noqa: E731
    history_id = call("create_history", name="Web UI: resistance genes")["id"]
    pasted = {name: call("create_dataset_from_text", history_id=history_id, name=name, file_type="tabular",
                         content=content)
              for name, content in COUNTS.items()}
    collection = call("create_collection", history_id=history_id, collection_type="list", name="isolates",
                      element_identifiers=[{"name": name, "src": "hda", "id": made["dataset_id"]}
                                           for name, made in pasted.items()])
    mapped = call("run_tool", history_id=history_id, tool_id="sort1",
                  inputs={"input": {"batch": True, "values": [{"src": "hdca", "id": collection["collection_id"]}]},
                          "column": 2, "style": "num", "order": "DESC"})
    failed = call("run_tool", history_id=history_id, tool_id="Cut1",
                  inputs={"input": {"src": "hda", "id": pasted["SA01"]["dataset_id"]},
                          "columnList": "not-a-column", "delimiter": "T"})
    job_ids = [job["id"] for job in mapped["jobs"] + failed["jobs"]]
    for _ in range(5):  # "call again while timed_out" (its description): a loaded machine may need it
        waited = call("wait_for_jobs", job_ids=job_ids, timeout_seconds=120)
        if not waited["timed_out"]:
            break
    states = sorted(job["state"] for job in waited["jobs"])
    assert waited["all_terminal"] and states == ["error", "ok", "ok"], waited
    content = (
        "# Resistance genes\n\n"
        f"{MARKDOWN_LINE}\n\n"
        "```galaxy\n"
        f'history_dataset_as_table(history_dataset_id={pasted["SA02"]["dataset_id"]}, title="Counts of SA02")\n'
        "```\n"
    )
    headed = call("create_dataset_from_text", history_id=history_id, name="SA03", file_type="tabular", header=True,
                  content="gene\tcount\ntetK\t2\nermC\t9\n")
    hashed = call("create_dataset_from_text", history_id=history_id, name="SA04", file_type="tabular", header=True,
                  content="#gene\tcount\nsplit\t4\n")
    content += ("\n```galaxy\n"
                f'history_dataset_as_table(history_dataset_id={headed["dataset_id"]}, title="Counts of SA03")\n'
                "```\n\n```galaxy\n"
                f'history_dataset_as_table(history_dataset_id={hashed["dataset_id"]}, title="Counts of SA04")\n'
                "```\n")
    page = call("create_page", history_id=history_id, content=content)
    return {"history_id": history_id, "page_id": page["page_id"], "mapped": mapped["implicit_collections"][0],
            "failed": failed["outputs"][0]}


def test_the_web_ui_shows_the_agents_history_and_page(galaxy, analysis, page_in_browser, screenshots):
    """Log in through Galaxy's own login page as the demo user, open the history the agent filled (the
    mapped-over collection and its elements, the errored dataset), then its notebook page."""
    from playwright.sync_api import expect

    browser, url = page_in_browser, galaxy.galaxy_url
    shot = lambda name: browser.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)  # noqa: E731

    browser.goto(f"{url}/login/start")
    browser.locator("#login-form-name").fill(galaxy.info["demo_email"])
    browser.locator("#login-form-password").fill(galaxy.info["demo_password"])
    shot("1-login-page")
    browser.get_by_role("button", name="Login", exact=True).click()
    browser.wait_for_url(f"{url}/")
    expect(browser.get_by_text("Loading Toolbox")).to_have_count(0)
    shot("2-logged-in")
    current = browser.context.request.get(f"{url}/api/users/current").json()  # the browser's own session cookie
    assert current.get("email") == galaxy.info["demo_email"], current

    browser.goto(f"{url}/histories/view?id={analysis['history_id']}")
    failed = browser.locator(f"#dataset-{analysis['failed']['id']}")
    expect(failed).to_have_attribute("data-state", "error")
    expect(failed).to_contain_text("Cut on")
    mapped = browser.locator(f"#dataset_collection-{analysis['mapped']['id']}")
    expect(mapped).to_have_attribute("data-state", "ok")
    expect(mapped).to_contain_text("a list with 2 tabular datasets")
    for name in ("SA01", "SA02", "isolates"):
        expect(browser.locator(".content-item", has_text=name).first).to_have_attribute("data-state", "ok")
    shot("3-history")

    mapped.click()  # drills into the collection: one sorted dataset per element, each ok
    elements = browser.locator(".content-item", has_text=re.compile("SA0[12]"))
    expect(elements).to_have_count(2)
    for index in range(2):
        expect(elements.nth(index)).to_have_attribute("data-state", "ok")
    shot("4-mapped-over-collection")

    browser.goto(f"{url}/published/page?id={analysis['page_id']}")
    expect(browser.locator("h1", has_text="Resistance genes")).to_be_visible()
    expect(browser.locator("strong", has_text="counted")).to_be_visible()  # the markdown rendered, not shown raw
    expect(browser.get_by_text("**counted**")).to_have_count(0)
    table = browser.locator("table", has=browser.locator("td", has_text="mecA"))
    expect(table).to_be_visible()
    cells = [text.strip() for text in table.locator("td").all_inner_texts()]
    assert cells == ["gene", "count", "mecA", "5", "blaZ", "17"], cells
    expect(browser.get_by_text("Counts of SA02")).to_be_visible()
    # Tables pasted with header=True: Galaxy's page shows their column names as the table's header.
    headed = browser.locator("table", has=browser.locator("td", has_text="tetK"))
    expect(headed).to_be_visible()
    header = [text.strip() for text in headed.locator("th").all_inner_texts()]
    rows = [text.strip() for text in headed.locator("td").all_inner_texts()]
    # Galaxy's page table reads the file's lines, skipping only '#' lines: a plain header line shows again as
    # the first row (create_dataset_from_text's description says so), a '#' header line does not.
    assert (header, rows) == (["gene", "count"], ["gene", "count", "tetK", "2", "ermC", "9"]), (header, rows)
    hashed = browser.locator("table", has=browser.locator("td", has_text="split"))
    header = [text.strip() for text in hashed.locator("th").all_inner_texts()]
    rows = [text.strip() for text in hashed.locator("td").all_inner_texts()]
    assert (header, rows) == (["gene", "count"], ["split", "4"]), (header, rows)
    shot("5-page")
