"""Code navigation for agents: ``smart_search``, ``smart_outline``, ``smart_unfold`` (issue 22).

claude-mem's smart-file-read tools in process: tree-sitter grammars from their PyPI wheels
(nothing downloaded at run time) find a file's symbols; the agent reads a folded outline
(signatures, bodies folded) or one symbol's source instead of a whole file. The MCP tools
are ``workbench.mcp_server.code_tools``; the CLI is ``workbench code`` (``cli.code``).

- ``languages``  extension -> language, the grammar wheels, loaded on first use
- ``queries``    the tree-sitter query per language, kinds, containers, icons
- ``source``     a file read safely: size cap, binary check, every encoding, lines
- ``paths``      paths resolved inside the project root (no ``..``/symlink escape)
- ``symbols``    parse: symbols with signature, doc, line range, members nested
- ``fold``       the folded view (the original's text shape) and its token estimate
- ``unfold``     one symbol's full source; the available symbols when it is missing
- ``walk``       the source files under a folder: skipped folders, ``.gitignore``
- ``search``     the original's symbol scoring and order
- ``cache``      parsed files by path, size and mtime (the MCP server searches often)
- ``navigate``   the three tools as functions returning text and JSON

Nothing here touches the store or the service: it reads the project's files, read-only.
Importing ``workbench.code`` costs nothing heavy: ``tree_sitter`` and each grammar are
imported inside the functions that parse.
"""
