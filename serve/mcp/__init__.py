"""purr's tools for agents over the Model Context Protocol: ``purr mcp`` (stdio) or ``purr mcp
--http HOST:PORT`` (streamable HTTP at ``/mcp``), in the ``[mcp]`` extra.

    edit_answer(text, question?, documents?, apply_unsure?)  the answer fixed where proved wrong
    check_answer(text, question?, documents?)                verdicts and suggestions, no change
    research(query, k?)                                      evidence from the index or the web
    check_citations(text, sources)                           a cited text's citations checked

``protocol`` (the tools' models), ``tools`` (the work, over the HTTP API's ``EditService``),
``server`` (the SDK's server, strict arguments, errors as tool results), ``http`` (the key guard).
"""
