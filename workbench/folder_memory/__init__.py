"""Folder memory files: a "recent activity" section in each touched folder's CLAUDE.md.

claude-mem's folder context (``src/utils/claude-md-utils.ts``, ``src/cli/claude-md-commands.ts``,
``docs/public/usage/folder-context.mdx`` at commit e2d1df56), rebuilt with its edges closed:
off by default (``folder_memory_files``); the section lives between marker lines and nothing
outside them is ever changed; files are written atomically; only folders inside the project
root (symlinks resolved) get one, never the root itself, ``.git``, a deny-list of generated
folders, or the user's ``folder_memory_exclude``; stored memories are untrusted text, so
nothing a memory says can close the markers or pass for an instruction.

- ``section``  render the section from observations, splice it into / out of a file's text
- ``places``   which folder may get a file: inside the root, not denied, not a symlink
- ``plan``     observations of a project grouped by folder -> one planned change per file
- ``apply``    write (or clean) what a plan says, atomically; the service's automatic run
"""
