"""The command-line modules import each other in one direction only: cli_options is shared and imports none of
them, and no CLI module is reached again from the modules it imports (no import cycle, not even a late one)."""

from __future__ import annotations

import grimp

CLI_MODULES = ("trinity_desktop.cli", "trinity_desktop.cli_plan", "trinity_desktop.cli_validate",
               "trinity_desktop.cli_options")


def _graph():
    return grimp.build_graph("trinity_desktop", include_external_packages=False)


def test_no_import_cycle_between_the_cli_modules():
    graph = _graph()
    modules = [m for m in graph.modules if m.startswith("trinity_desktop.cli")]
    assert set(CLI_MODULES) <= set(modules)
    for a in modules:
        for b in modules:
            if a != b and graph.direct_import_exists(importer=a, imported=b):
                assert not graph.chain_exists(importer=b, imported=a), f"{a} and {b} import each other"


def test_the_shared_options_module_imports_no_other_cli_module():
    graph = _graph()
    imported = graph.find_modules_directly_imported_by("trinity_desktop.cli_options")
    assert not {m for m in imported if m.startswith("trinity_desktop.cli")}
    assert not any(graph.chain_exists(importer="trinity_desktop.cli_options", imported=m)
                   for m in CLI_MODULES if m != "trinity_desktop.cli_options")
