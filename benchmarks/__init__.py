"""The lab: the study runner, results bookkeeping (rows, costs, stamps), the cost timer,
summaries, bootstrap, speed in turns, the table renderer. Not part of the greenkd-spacy
package (which never imports it); run its modules through benchmarks/run.py."""
from typing import List, Optional

# What benchmarks/run.py was typed as (its path and the module), so that a results row
# records the command that remakes it (rows.command_line); None when not launched by it.
launched_as: Optional[List[str]] = None
