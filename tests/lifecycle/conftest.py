"""The in-process API and UI clients of tests/api and tests/ui, for the storage pages."""

from tests.api.conftest import api  # noqa: F401
from tests.ui.conftest import ui  # noqa: F401
