"""Accessibility scans with axe-core, the one place the browser tests run them.

`scripts/setup.sh test` installs the pinned axe-core from the npm registry into `tools/`;
`assert_accessible(page)` injects it into the page as it is and fails on every serious or
critical violation of the WCAG 2.1 A and AA rules, naming the rule, the elements and what
is wrong with each, so the failure says what to fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE_JS = Path(__file__).resolve().parents[2] / "tools" / "node_modules" / "axe-core" / "axe.min.js"

WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")

BLOCKING_IMPACTS = frozenset({"serious", "critical"})

# axe marks the label-in-name check as experimental and leaves it out of a tag run; a
# control whose accessible name drops its visible text fails speech users, so it is on.
EXTRA_RULES = ("label-content-name-mismatch",)


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Run axe over the whole document; its violations, as axe reports them."""
    if not AXE_JS.exists():
        raise FileNotFoundError(
            f"axe-core is not installed at {AXE_JS}: run `bash scripts/setup.sh test`"
        )
    page.add_script_tag(path=str(AXE_JS))
    # Scan the page at rest: a label that just settled fades in from 20% opacity, and
    # axe would measure the contrast of that frame. Finite animations are run to their
    # end; the endless live shimmer keeps going, as a reader sees it.
    page.evaluate(
        """() => document.getAnimations().forEach(animation => {
            if (animation.effect?.getComputedTiming().endTime !== Infinity) animation.finish();
        })"""
    )
    options = {
        "runOnly": {"type": "tag", "values": list(WCAG_TAGS)},
        "rules": {rule: {"enabled": True} for rule in EXTRA_RULES},
    }
    result = page.evaluate("options => axe.run(document, options)", options)
    return list(result["violations"])


def assert_accessible(page: Page) -> None:
    """Fail with every serious or critical violation on the page as it is now."""
    blocking = [v for v in axe_violations(page) if v.get("impact") in BLOCKING_IMPACTS]
    assert not blocking, "accessibility violations:\n" + "\n".join(
        _describe(violation) for violation in blocking
    )


def _describe(violation: dict[str, Any]) -> str:
    lines = [f"{violation['id']} ({violation['impact']}): {violation['help']}"]
    for node in violation.get("nodes", []):
        target = " ".join(str(part) for part in node.get("target", []))
        summary = " ".join(str(node.get("failureSummary") or "").split())
        lines.append(f"  {target}: {summary}")
    return "\n".join(lines)
