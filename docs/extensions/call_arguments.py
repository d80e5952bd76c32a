"""A griffe extension for the API pages: the house style's (Keras')
`Call arguments:` docstring section rendered as a table of arguments.

Griffe's Google-style reader knows `Args:` but not `Call arguments:`, which it
would show as a block of plain text. Before the docstring is parsed, this
rewrites the section's title line to `Other Parameters: Call arguments`:
griffe then reads the entries as parameters (not checked against `__init__`'s
signature, since they are the arguments of `call`) and titles the table
"Call arguments". The source keeps Keras' layout.
"""

import re

import griffe

_CALL_ARGUMENTS = re.compile(r"^(\s*)Call arguments:\s*$", flags=re.M)


class CallArguments(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        docstring = obj.docstring
        if docstring is not None and "Call arguments:" in docstring.value:
            docstring.value = _CALL_ARGUMENTS.sub(
                r"\1Other Parameters: Call arguments", docstring.value
            )
