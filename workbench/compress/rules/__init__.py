"""The offline compressor's rules, one module per job.

Modules:
- ``text``     windowing, shortening, sentences, code definitions
- ``secrets``  secret-looking values (named, masked, never copied) and secret file paths
- ``tags``     concepts from paths: extensions, well-known names, folders
- ``call``     ``ToolCall``: one event with its parsed views, and the draft builder
- ``edits``    Edit, MultiEdit, Write, NotebookEdit
- ``reads``    Read, Grep, Glob, LS, WebFetch, WebSearch, Task, TodoWrite, ExitPlanMode, others
- ``shell``    Bash command-line parsing and the per-session memory of failing test runs
- ``bash``     the Bash rules in order (security, tests, git, tooling, anything else)
- ``tooling``  git, linters/builds/formatters, installs and file operations run from Bash
- ``testrun``  test-runner output: counts, failing tests, first error, verdict
"""
