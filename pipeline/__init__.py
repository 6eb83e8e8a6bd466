"""The rulings corpus pipeline.

Per page: corpus (snapshot bytes) -> normalize (text blocks) -> extract
(ruling records with statements); then, over every record: compile (the
rules table) -> generate (the engine module). load writes what each step
produces into DuckDB; the read side reads it back (:mod:`pipeline.queries`
for the commands, :mod:`pipeline.stored` for the next build or refresh).
Each stage is one module with a plain input and output type
(:mod:`pipeline.records`, :mod:`pipeline.schema` are shared by all);
:mod:`pipeline.run` (build) and :mod:`pipeline.refresh` orchestrate, reading
pages in :mod:`pipeline.workers` and ending the same way
(:mod:`pipeline.finish`); :mod:`pipeline.cli` only parses arguments and prints.
"""

__version__ = "0.1.0"
