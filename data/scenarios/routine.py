"""The short, everyday sessions between the stories: a tour, a review, a release, a catch-up.

Real histories are full of these: twenty minutes to re-read a module before changing it, a
look at a branch before opening the PR, a test run before tagging. Each template takes the
project's own commands, files and results, so the sessions read like that project's.
"""

from __future__ import annotations

from typing import Any

from scenarios.kit import Project, bash, git_diff_stat, git_log, grep, read, session, task, turn


def tour(
    project: Project, area: str, rel: str, name: str, callers: list[str], finding: str
) -> dict[str, Any]:
    """Re-reading a part of the code before working on it."""
    return session(
        project,
        f"tour of {area}",
        [
            turn(
                f"Give me a quick tour of {area}: what does {rel} do, and who calls {name}?",
                [
                    task(
                        f"Explain {area}",
                        f"Explain how {area} works in this repository and list the entry points.",
                        finding,
                        uses=6 + len(callers),
                    ),
                    read(project, rel),
                    grep(project, name, [rel, *callers]),
                ],
                f"{finding} {name} is called from {len(callers)} "
                f"place{'s' * (len(callers) != 1)}: {', '.join(callers)}.",
            )
        ],
        source="startup",
    )


def review(
    project: Project, branch: str, files: list[tuple[str, int, int]], remark: str
) -> dict[str, Any]:
    """A look at a branch before opening the pull request."""
    return session(
        project,
        f"review of {branch}",
        [
            turn(
                f"Review the diff on {branch} before I open the PR. Anything risky?",
                [
                    bash(
                        f"git switch {branch}",
                        f"Switched to branch '{branch}'\n",
                        description="Check out the branch",
                    ),
                    git_diff_stat(files),
                    read(project, files[0][0]),
                ],
                remark,
            )
        ],
    )


def release(
    project: Project,
    version: str,
    test: tuple[str, str],
    check: tuple[str, str],
    commits: list[str],
) -> dict[str, Any]:
    """Everything green, then a tag."""
    return session(
        project,
        f"release {version}",
        [
            turn(
                f"Run the tests and the linters, then tag {version} if everything is green.",
                [
                    bash(test[0], test[1], description="Full test suite"),
                    bash(check[0], check[1], description="Static checks"),
                    git_log(commits),
                    bash(
                        f"git tag -a {version} -m 'Release {version}' && git push origin {version}",
                        f"To github.com:acme/{project.name}.git\n"
                        f" * [new tag]         {version} -> {version}\n",
                        description="Tag and push",
                    ),
                ],
                f"Tests and checks are green; tagged {version} with {len(commits)} commits "
                "since the last release.",
            )
        ],
        end_reason="logout",
    )


def catch_up(project: Project, commits: list[str], summary: str) -> dict[str, Any]:
    """Monday morning: what happened here last week?"""
    return session(
        project,
        "catching up",
        [
            turn(
                "What changed in this repo since last week? Summarise it for the standup.",
                [
                    git_log(commits),
                    bash(
                        "git status --short --branch",
                        "## main...origin/main\n",
                        description="Working tree state",
                    ),
                ],
                summary,
            )
        ],
        source="resume",
    )
