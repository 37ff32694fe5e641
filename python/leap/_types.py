"""The types the package's signatures name (for readers and type checkers; nothing here runs).

A record is what leap-record(5) describes: a JSON object, as a dict. A caller may also hand over
a record as one line of JSON text (str or bytes), which passes to the programs as it is.
"""

import os
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

Record = Dict[str, Any]
RecordIn = Union[Record, str, bytes]
Records = Iterable[RecordIn]
PathLike = Union[str, "os.PathLike[str]"]
Stage = Union[str, Sequence[PathLike]]   # one command line: a program, or [program, arg, ...]
Env = Mapping[str, Optional[PathLike]]   # variables to set on top of os.environ (None: unset)
