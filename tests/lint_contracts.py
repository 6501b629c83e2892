"""A contract for import-linter (`make lint`): no module imports a private name (one beginning with an underscore,
not a dunder) of another module. A private name is the module's own business; a caller that needs it names what
is missing from the module's public API."""

from __future__ import annotations

import re

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck
from importlinter.domain.helpers import module_expressions_to_modules

_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?\s*(.*?)\)?\s*(#.*)?$")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class PrivateNamesContract(Contract):
    """``source_modules``: the packages whose modules may not import another module's private names."""

    type_name = "private_names"
    source_modules = fields.ListField(subfield=fields.ModuleExpressionField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        sources = module_expressions_to_modules(graph, self.source_modules)  # type: ignore[arg-type]
        found: list[str] = []
        for source in sources:
            for module in sorted({source.name} | graph.find_descendants(source.name)):
                for imported in sorted(graph.find_modules_directly_imported_by(module)):
                    for detail in graph.get_import_details(importer=module, imported=imported):
                        found += self._private_names(module, imported, detail)
        return ContractCheck(kept=not found, warnings=[], metadata={"found": found})

    @staticmethod
    def _private_names(module: str, imported: str, detail: dict) -> list[str]:
        match = _FROM.match(detail["line_contents"])
        if match is None:
            return []
        names = [n.strip().split(" as ")[0] for n in match.group(2).split(",") if n.strip()]
        return [
            f"{module}:{detail['line_number']} imports {name} from {imported}"
            for name in names
            if _private(name) and match.group(1) == imported
        ]

    def render_broken_contract(self, check: ContractCheck) -> None:
        for line in check.metadata["found"]:
            output.print_error(line)
