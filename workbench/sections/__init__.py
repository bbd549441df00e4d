"""Each settings section's own checks: standard library only, below ``workbench.settings``.

``workbench/settings.py`` declares every field; the rules a section's values must follow live
here, one module per feature, so the settings module never imports a feature (``compress/``,
``team/``) and a feature's own code asks the same module (``team maintain --older-than``
parses durations with ``duration``, ``doctor`` probes with ``compress``).

- ``compress``  compressor names, the fallback chain's rules, the OpenAI-compatible presets,
                ``doctor``'s reachability probe
- ``team``      where the team lake lives: the catalog URL, the data path, the author id
- ``duration``  ``7d``-style durations (``team_snapshot_retention``, ``team maintain``)
"""
