"""The stdio MCP server: workbench's memory as tools for an agent (``workbench mcp``).

- ``front``         ``workbench mcp``'s start: answers the handshake and ``tools/list`` from
                    ``handshake.json`` with the stdlib only, hands over to the SDK on a tool call
- ``handshake``     takes ``handshake.json`` from the SDK server's own replies
- ``server``        builds the ``MCPServer``, registers the listed tool modules, runs it over stdio
- ``backend``       the tools' line to the service (HTTP): started on demand, errors as tool errors
- ``recall_tools``  search, timeline, get_observations, save_memory, workflow (the 3-layer recall)
- ``fetch_sources`` get_observations' two sides (ids, team refs) as the service answers them
- ``code_tools``    smart_search, smart_outline, smart_unfold (``workbench.code``; files,
                    not the service)
- ``corpus_tools``  build_corpus, list_corpora, prime_corpus, query_corpus (the knowledge tools)
- ``query_schema``  tool signatures built from the search contract's models (no drift)
- ``__main__``      ``python -m workbench.mcp_server``: the SDK server over stdio
- ``wire``          the stdio transport: every request line gets an answer, the loop never dies
- ``line_check``    one raw line judged: a message to serve, or the JSON-RPC error answering it
- ``stdio_fds``     the wire moved to private descriptors, fd 0/1 pointed away while serving

Adding a group of tools is one new module here defining ``register(server, client)``, where
``server`` is the ``MCPServer`` and ``client`` the shared ``ServiceBackend``, and its line in
``server.tool_modules`` (listed by hand, as the CLI's groups and the routers are). A tool module
never touches the store: the service is the one writer and holds the embedding model (the
code tools read the project's source files only).

Nothing here may write to stdout outside the SDK's transport: stdout is the protocol channel.
"""
