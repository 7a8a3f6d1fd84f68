"""`python -m snnbench.results.crate_check CRATE...`: check run crates (snnbench.results.crate) with
roc-validator against the Provenance Run Crate 0.5 profile (and the profiles it builds on: Workflow Run
Crate, Process Run Crate, Workflow RO-Crate, RO-Crate 1.1), without a network.

The validator reads a crate's JSON-LD, and so fetches the contexts its @context names; offline it serves
them from its HTTP cache only. This fills a cache of its own with the copy of each context that rocrate
ships (the RO-Crate 1.1 context: rocrate/data/ro-crate.jsonld, whose @id says which it is) and runs the
validator on it offline. A context with no local copy is a failure that names it.
Runs in the environment of envs/rocrate-validator.yaml (.venv-rocrate-validator), not in .venv.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from importlib import resources
from pathlib import Path

PROFILE = "provenance-run-crate-0.5"
SEVERITY = "REQUIRED"


def local_contexts() -> dict[str, Path]:
    """URL -> the file of each JSON-LD context rocrate ships (its @id is the URL it is served at)."""
    found = {}
    for item in (resources.files("rocrate") / "data").iterdir():
        if item.name.endswith(".jsonld"):
            document = json.loads(item.read_text())
            if isinstance(document.get("@id"), str) and "@context" in document:
                found[document["@id"]] = Path(str(item))
    return found


class NotACrate(ValueError):
    """A crate folder whose metadata is missing or does not read as a crate's (one line naming it)."""


def named_contexts(crate: Path) -> list[str]:
    """The remote contexts a crate's metadata names; NotACrate where it has no readable metadata."""
    metadata = Path(crate) / "ro-crate-metadata.json"
    try:
        context = json.loads(metadata.read_bytes())["@context"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise NotACrate(f"{metadata}: not a crate's metadata ({type(error).__name__}: {error})") from None
    return [c for c in (context if isinstance(context, list) else [context]) if isinstance(c, str)]


def seed_cache(cache: Path, contexts: dict[str, Path]) -> None:
    """Fill the validator's HTTP cache (requests-cache, SQLite) with these files as the answers to their URLs."""
    from requests.adapters import HTTPAdapter
    from requests_cache import CachedSession
    from urllib3 import HTTPResponse

    class LocalFiles(HTTPAdapter):
        def send(self, request, **kwargs):
            body = contexts[request.url].read_bytes()
            headers = {"Content-Type": "application/ld+json"}
            raw = HTTPResponse(io.BytesIO(body), headers, 200, preload_content=False, request_url=request.url)
            return self.build_response(request, raw)

    session = CachedSession(str(cache), backend="sqlite", expire_after=-1, allowable_codes=(200,))
    session.mount("https://", LocalFiles())
    session.mount("http://", LocalFiles())
    for url in contexts:
        session.get(url).raise_for_status()
    session.close()


def check(crate: Path, cache: Path, profile: str = PROFILE, severity: str = SEVERITY) -> dict:
    """Validate `crate` offline with the contexts in `cache`: whether it passed, and each issue of at least
    `severity` (the check, its severity, the message, the entity)."""
    from rocrate_validator import services
    from rocrate_validator.models import Severity, ValidationSettings

    settings = ValidationSettings(
        rocrate_uri=str(Path(crate).resolve()),
        profile_identifier=profile,
        requirement_severity=severity,
        offline=True,
        cache_path=cache,
    )
    result = services.validate(settings)
    issues = [
        {
            "check": issue.check.identifier,
            "severity": issue.severity.name,
            "message": issue.message,
            "entity": issue.violatingEntity,
        }
        for issue in result.get_issues(Severity[severity])
    ]
    return {"crate": str(crate), "profile": profile, "severity": severity, "passed": not issues, "issues": issues}


def check_all(crates: list[Path], profile: str = PROFILE, severity: str = SEVERITY) -> list[dict]:
    """Check each crate; a crate naming a context with no local copy fails without running the validator."""
    contexts = local_contexts()
    reports = []
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder) / "http-cache"
        seed_cache(cache, contexts)
        for crate in crates:
            try:
                missing = [url for url in named_contexts(crate) if url not in contexts]
            except NotACrate as error:  # no readable metadata: fails without running the validator
                reports.append({"crate": str(crate), "profile": profile, "passed": False, "issues": [str(error)]})
                continue
            if missing:
                problem = f"no local copy of the JSON-LD context(s) {', '.join(missing)}"
                reports.append({"crate": str(crate), "profile": profile, "passed": False, "issues": [problem]})
                continue
            reports.append(check(crate, cache, profile, severity))
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("crates", nargs="+", type=Path, help="crate folders (results/crates/<experiment>)")
    parser.add_argument("--profile", default=PROFILE, help=f"validator profile (default {PROFILE})")
    parser.add_argument("--severity", default=SEVERITY, choices=["REQUIRED", "RECOMMENDED", "OPTIONAL"])
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    args = parser.parse_args(argv)
    reports = check_all(args.crates, args.profile, args.severity)
    if args.json:
        print(json.dumps(reports, indent=1))
    else:
        for report in reports:
            verdict = "passed" if report["passed"] else f"FAILED ({len(report['issues'])} issues)"
            print(f"{report['crate']}: {report['profile']} at {args.severity}: {verdict}")
            for issue in report["issues"]:
                print(f"  {issue}")
    return 0 if all(r["passed"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
